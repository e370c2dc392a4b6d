// SPDX-License-Identifier: MIT
// The measuring half of tests/bench/bench_gui_run.py (a benchmark, not a test): opens RUN in the
// real window, offscreen, and prints one JSON line:
//   listed_ms   openPaths() -> the run's row is in the browser model
//   shown_ms    openPaths() -> the run browser has painted it (the first paint included)
//   first_paint_ms  the UI-thread gap that first paint took (part of showing, not a stall)
//   idle_ms     openPaths() -> every state read and the audit done (background work over)
//   max_stall_ms  the longest gap between ticks of a 2 ms timer on the UI thread, beyond its
//                 period, from the start to idle, the first paint and the stalls before it included:
//                 how long the UI could not respond at any moment
//   max_stall_after_shown_ms  the same from the run shown to idle (what the user meets while the
//                 states are read and the run audited)
//   tab_painted_ms  openPaths() -> the chosen tab's table painted with rows in it (--tab tensors,
//                 optimizer: the first paint of a large checkpoint's table); -1 for other tabs
//   checkpoints, findings
//   filter_key_ms  with --tab tensors --type TEXT: once idle, TEXT typed into the Tensors tab's
//                 filter one key at a time, each key's time from its press to the table's next paint
// --tab NAME shows that checkpoint tab (default: overview) while the run loads. With --idle it opens nothing and probes the event loop for --idle-ms: the stall floor of this
// machine at this moment, the baseline the stalls are compared with. CKPT_PROBE_VERBOSE=1 prints
// each new longest stall and when it happened, and every event the UI thread took over 8 ms to
// deliver (receiver class and name, event type, nesting depth), to find its cause.
#include "ckpt/io/process_memory.h"
#include "ui/checkpointview.h"
#include "ui/findingspanel.h"
#include "ui/pages/checkpointtensorspage.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/optimizerpage.h"
#include "ui/mainwindow.h"
#include "ui/models/findingsmodel.h"
#include "ui/models/runbrowsermodel.h"
#include "ui/runbrowser.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QKeyEvent>
#include <QLineEdit>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

// Times every event the UI thread delivers: a stall is always one slow event (a queued slot, a
// paint, a timer), and its receiver names the culprit.
class TimedApplication final : public QApplication {
public:
    using QApplication::QApplication;
    bool verbose = false;
    // Top-level events delivered since the probe's last tick: a stall made of many small events
    // (a burst of queued results) shows here, not as one slow event.
    int eventsSinceTick = 0;
    qint64 nsSinceTick = 0, slowestSinceTick = 0;
    const char* slowestName = "";
    int slowestType = 0;
    void resetTick() { eventsSinceTick = 0; nsSinceTick = 0; slowestSinceTick = 0; }

    bool notify(QObject* receiver, QEvent* event) override
    {
        if (!verbose)
            return QApplication::notify(receiver, event);
        const int type = event->type();
        // The receiver may be gone afterwards (a deferred delete): name it now.
        const char* className = receiver->metaObject()->className();
        const QString objectName = receiver->objectName();
        ++m_depth;
        QElapsedTimer timer;
        timer.start();
        const bool result = QApplication::notify(receiver, event);
        const qint64 ns = timer.nsecsElapsed();
        --m_depth;
        if (m_depth == 0) {
            ++eventsSinceTick;
            nsSinceTick += ns;
            if (ns > slowestSinceTick) {
                slowestSinceTick = ns;
                slowestName = className;
                slowestType = type;
            }
        }
        if (ns > 8'000'000)
            std::fprintf(stderr, "  slow event %6.1f ms depth %d type %d %s '%s'\n", ns / 1e6, m_depth, type,
                         className, qPrintable(objectName));
        return result;
    }

private:
    int m_depth = 0;
};

} // namespace

int main(int argc, char** argv)
{
    ckpt::tuneAllocatorForTables(); // as app/gui/main.cpp does
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimedApplication app(argc, argv);
    app.verbose = qEnvironmentVariableIsSet("CKPT_PROBE_VERBOSE");
    const QStringList args = QApplication::arguments();
    const bool idleOnly = args.contains(QStringLiteral("--idle"));
    const qsizetype idleAt = args.indexOf(QStringLiteral("--idle-ms"));
    const qint64 idleMs = idleAt > 0 && idleAt + 1 < args.size() ? args[idleAt + 1].toLongLong() : 2000;
    if (!idleOnly && args.size() < 2) {
        std::fprintf(stderr, "usage: bench_gui_probe RUN [--tab NAME [--type TEXT]] | --idle [--idle-ms N]\n");
        return 2;
    }

    MainWindow window(MainWindow::Settings::Ignore);
    const qsizetype tabAt = args.indexOf(QStringLiteral("--tab"));
    if (tabAt > 0 && (tabAt + 1 >= args.size() || !window.selectTab(args[tabAt + 1]))) {
        std::fprintf(stderr, "--tab: one of %s\n", qPrintable(MainWindow::tabNames().join(QStringLiteral(", "))));
        return 2;
    }
    window.show();
    QApplication::processEvents();

    QElapsedTimer clock;
    qint64 listed = -1, painted = -1, shown = -1, idle = -1, lastTick = -1, maxStall = 0, maxStallAll = 0, firstPaint = 0;
    qint64 tabPainted = -1;
    // The first paint of the window with the run in it is the "shown" moment: its cost belongs to
    // showing (shown_ms, first_paint_ms), the stalls are what the user meets after it.
    struct PaintWatch : QObject {
        std::function<void()> onPaint;
        bool eventFilter(QObject*, QEvent* event) override
        {
            if (event->type() == QEvent::Paint && onPaint)
                onPaint();
            return false;
        }
    } watch;
    // the chosen tab's table: its first paint with rows is when the user sees the checkpoint's content
    QAbstractItemView* tabView = nullptr;
    if (tabAt > 0 && args[tabAt + 1] == QLatin1String("tensors"))
        tabView = window.checkpointView()->tensorsPage()->view();
    else if (tabAt > 0 && args[tabAt + 1] == QLatin1String("optimizer"))
        tabView = window.checkpointView()->optimizerPage()->findChild<QAbstractItemView*>();
    struct TabWatch : QObject {
        std::function<void()> onPaint;
        bool eventFilter(QObject*, QEvent* event) override
        {
            if (event->type() == QEvent::Paint && onPaint)
                onPaint();
            return false;
        }
    } tabWatch;
    if (tabView) {
        tabWatch.onPaint = [&] {
            if (tabPainted < 0 && tabView->model() && tabView->model()->rowCount() > 0)
                tabPainted = clock.nsecsElapsed();
        };
        tabView->viewport()->installEventFilter(&tabWatch);
    }
    // --type TEXT: once everything is loaded, type TEXT into the Tensors tab's filter one key at a
    // time; each key's latency runs from the key press to the table's next paint.
    std::vector<double> keyMs;
    const qsizetype typeAt = args.indexOf(QStringLiteral("--type"));
    auto typeIntoFilter = [&] {
        if (typeAt > 0 && typeAt + 1 < args.size() && tabView == window.checkpointView()->tensorsPage()->view()) {
            QLineEdit* filter = window.checkpointView()->tensorsPage()->filterEdit();
            filter->setFocus();
            qint64 paintedAt = -1;
            tabWatch.onPaint = [&] { paintedAt = clock.nsecsElapsed(); };
            for (const QChar c : args[typeAt + 1]) {
                paintedAt = -1;
                const qint64 pressed = clock.nsecsElapsed();
                QKeyEvent press(QEvent::KeyPress, 0, Qt::NoModifier, QString(c));
                QKeyEvent release(QEvent::KeyRelease, 0, Qt::NoModifier, QString(c));
                QCoreApplication::sendEvent(filter, &press);
                QCoreApplication::sendEvent(filter, &release);
                // the filter runs inside the key press (textChanged); what it posted (layout, updates) is
                // handled, then the table paints at once instead of at the platform's next frame
                QApplication::processEvents();
                tabView->viewport()->repaint();
                keyMs.push_back(paintedAt < 0 ? -1.0 : (paintedAt - pressed) / 1e6);
            }
            if (app.verbose)
                std::fprintf(stderr, "filter text '%s', %d rows shown, table visible %d\n", qPrintable(filter->text()),
                             tabView->model()->rowCount(), tabView->viewport()->isVisible());
        }
    };
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(2);
    QObject::connect(&probe, &QTimer::timeout, &app, [&] {
        const qint64 now = clock.nsecsElapsed();
        const qint64 gap = lastTick >= 0 ? now - lastTick - 2'000'000 : 0;
        lastTick = now;
        maxStallAll = std::max(maxStallAll, gap);
        if (painted >= 0 && shown < 0) {
            shown = now;
            firstPaint = gap;
        } else if (shown >= 0 && gap > maxStall) {
            maxStall = gap;
            if (qEnvironmentVariableIsSet("CKPT_PROBE_VERBOSE"))
                std::fprintf(stderr, "stall %.1f ms at %.1f ms: %d events took %.1f ms, the slowest %.1f ms (type %d to %s)\n",
                             gap / 1e6, now / 1e6, app.eventsSinceTick, app.nsSinceTick / 1e6, app.slowestSinceTick / 1e6,
                             app.slowestType, app.slowestName);
        }
        app.resetTick();
        const bool tabWaits = tabView && tabPainted < 0 && clock.elapsed() < 120000;
        const bool done = idleOnly ? clock.elapsed() >= idleMs : (shown >= 0 && !window.isBusy() && !tabWaits);
        if (done) {
            idle = clock.nsecsElapsed();
            probe.stop();
            typeIntoFilter();
            QCoreApplication::quit();
        }
    });
    if (idleOnly)
        painted = 0; // nothing to show: every gap counts
    QObject::connect(window.runModel(), &QAbstractItemModel::rowsInserted, &app, [&](const QModelIndex& parent) {
        if (parent.isValid() || listed >= 0)
            return;
        listed = clock.nsecsElapsed();
        watch.onPaint = [&] {
            if (painted < 0)
                painted = clock.nsecsElapsed();
        };
        window.runBrowser()->view()->viewport()->installEventFilter(&watch);
    });

    clock.start();
    probe.start();
    if (!idleOnly)
        window.openPaths({args[1]});
    QApplication::exec();

    std::string keys;
    for (const double ms : keyMs)
        keys += (keys.empty() ? "" : ", ") + std::to_string(ms);

    int checkpoints = 0;
    for (const RunDataPtr& run : window.runModel()->runs())
        checkpoints += static_cast<int>(run->checkpoints.size());
    std::printf("{\"listed_ms\": %.2f, \"shown_ms\": %.2f, \"first_paint_ms\": %.2f, \"tab_painted_ms\": %.2f, \"idle_ms\": %.2f, "
                "\"max_stall_ms\": %.2f, \"max_stall_after_shown_ms\": %.2f, \"checkpoints\": %d, \"findings\": %d, "
                "\"filter_key_ms\": [%s]}\n",
                listed / 1e6, shown / 1e6, firstPaint / 1e6, tabPainted >= 0 ? tabPainted / 1e6 : -1.0, idle / 1e6, maxStallAll / 1e6,
                maxStall / 1e6, checkpoints, window.findingsPanel()->model()->rowCount(), keys.c_str());
    return 0;
}
