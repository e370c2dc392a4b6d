// SPDX-License-Identifier: MIT
// checkpoint-inspector [PATH...] [--tab NAME] [--compare A B] [--screenshot FILE] [--report FILE.html] [--size WxH] [--palette system|light|dark]
#include "checkpoint_inspector_version.h"

#include "ckpt/io/process_memory.h"
#include "ui/errorpanel.h"
#include "ui/mainwindow.h"
#include "ui/models/runbrowsermodel.h"
#include "ui/runbrowser.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPalette>
#include <QStyle>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

// Screenshots, --help and --version need no display: render offscreen unless told otherwise.
bool wantsOffscreen(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        for (const char* option : {"--screenshot", "--report", "--help", "--version", "-h", "-v"}) {
            if (std::strncmp(argv[i], option, std::strlen(option)) == 0)
                return true;
        }
    }
    return false;
}

// QCommandLineParser options take one value; "--compare A B" takes two, so it is cut out first.
QStringList takeCompare(QStringList& arguments, QString& error)
{
    const qsizetype at = arguments.indexOf(QStringLiteral("--compare"));
    if (at < 0)
        return {};
    if (at + 2 >= arguments.size() || arguments[at + 1].startsWith(QLatin1String("--"))
        || arguments[at + 2].startsWith(QLatin1String("--"))) {
        error = QStringLiteral("--compare needs two checkpoints: --compare A B");
        return {};
    }
    const QStringList pair{arguments[at + 1], arguments[at + 2]};
    arguments.remove(at, 3);
    return pair;
}

// What to open for --compare A B without other paths: their run when they share one.
QStringList compareSources(const QStringList& pair)
{
    const QString parentA = QFileInfo(pair[0]).absolutePath(), parentB = QFileInfo(pair[1]).absolutePath();
    if (parentA == parentB)
        return {parentA};
    return pair;
}

// A dark palette for checking (and using) the app in dark mode where the desktop gives none,
// e.g. offscreen: the views, plots and severity colours all follow the palette.
QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6), disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x79, 0xb8, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xa8));
    p.setColor(QPalette::HighlightedText, Qt::white);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

} // namespace

int main(int argc, char** argv)
{
    ckpt::tuneAllocatorForTables(); // as the CLI: ckpt/io/process_memory.h
    if (wantsOffscreen(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("checkpoint-inspector"));
    QApplication::setOrganizationName(QStringLiteral("checkpoint-inspector"));
    QApplication::setApplicationVersion(QStringLiteral(CKPT_GUI_VERSION));

    QStringList arguments = QApplication::arguments();
    QString compareError;
    const QStringList comparePair = takeCompare(arguments, compareError);

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "Inspect PyTorch checkpoints and training runs without Python.\n"
                                                                     "--compare A B: compare two checkpoints (files or folders)."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("paths"),
                                 QApplication::translate("main", "Checkpoint files, checkpoint folders, run folders or folders of runs."),
                                 QStringLiteral("[PATH...]"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QApplication::translate("main", "Render the window to a PNG once everything has loaded, then exit."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QApplication::translate("main", "Select a checkpoint tab: %1.").arg(MainWindow::tabNames().join(QStringLiteral(", "))),
                                 QStringLiteral("NAME"));
    const QCommandLineOption palette(QStringLiteral("palette"),
                                     QApplication::translate("main", "Colours: system (default), light or dark."),
                                     QStringLiteral("NAME"), QStringLiteral("system"));
    const QCommandLineOption report(QStringLiteral("report"),
                                    QApplication::translate("main", "Write the report of PATH (a run or a checkpoint) as one HTML file "
                                                                    "with its plots embedded, then exit."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption size(QStringLiteral("size"),
                                  QApplication::translate("main", "Window size WIDTHxHEIGHT (default 1400x860), e.g. for screenshots."),
                                  QStringLiteral("WxH"));
    parser.addOptions({screenshot, tab, palette, report, size});
    if (!compareError.isEmpty()) {
        std::fprintf(stderr, "checkpoint-inspector: %s\n", qPrintable(compareError));
        return 2;
    }
    parser.process(arguments);

    const QString paletteName = parser.value(palette).toLower();
    if (paletteName == QLatin1String("dark") || paletteName == QLatin1String("light")) {
        QApplication::setStyle(QStringLiteral("Fusion")); // a style that draws with the palette it is given
        QApplication::setPalette(paletteName == QLatin1String("dark") ? darkPalette() : QApplication::style()->standardPalette());
    } else if (paletteName != QLatin1String("system")) {
        std::fprintf(stderr, "checkpoint-inspector: unknown palette '%s' (choose from system, light, dark)\n", qPrintable(paletteName));
        return 2;
    }

    const bool screenshotMode = parser.isSet(screenshot) || parser.isSet(report);
    MainWindow window(screenshotMode ? MainWindow::Settings::Ignore : MainWindow::Settings::Use);
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        const int w = wh.size() == 2 ? wh[0].toInt() : 0, h = wh.size() == 2 ? wh[1].toInt() : 0;
        if (w < 400 || h < 300) {
            std::fprintf(stderr, "checkpoint-inspector: --size takes WIDTHxHEIGHT (at least 400x300), not '%s'\n", qPrintable(parser.value(size)));
            return 2;
        }
        window.resize(w, h);
    }
    if (parser.isSet(tab) && !window.selectTab(parser.value(tab))) {
        std::fprintf(stderr, "checkpoint-inspector: unknown tab '%s' (choose from %s)\n", qPrintable(parser.value(tab)),
                     qPrintable(MainWindow::tabNames().join(QStringLiteral(", "))));
        return 2;
    }
    window.show();

    QStringList paths = parser.positionalArguments();
    if (!comparePair.isEmpty()) {
        if (paths.isEmpty())
            paths = compareSources(comparePair);
        window.compareByPath(comparePair[0], comparePair[1]); // done once both have been listed
    }
    if (!paths.isEmpty())
        window.openPaths(paths);

    if (parser.isSet(report)) {
        if (paths.size() != 1) {
            std::fprintf(stderr, "checkpoint-inspector: --report needs exactly one PATH (a run or a checkpoint)\n");
            return 2;
        }
        const QString file = parser.value(report);
        QObject::connect(&window, &MainWindow::reportExported, &window, [file](const QString&, const QString& error) {
            if (!error.isEmpty())
                std::fprintf(stderr, "checkpoint-inspector: --report %s: %s\n", qPrintable(file), qPrintable(error));
            else
                std::printf("report %s written\n", qPrintable(file));
            std::fflush(stdout);
            QCoreApplication::exit(error.isEmpty() ? 0 : 1);
        });
        window.exportReport(paths.front(), file);
        return QApplication::exec();
    }

    if (screenshotMode) {
        const QString file = parser.value(screenshot);
        // Shoot once nothing has been loading for two polls in a row (the last results laid out),
        // or after a minute whatever is still running.
        auto* poll = new QTimer(&window);
        auto* clock = new QElapsedTimer;
        clock->start();
        int quiet = 0;
        QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, clock, file, quiet, comparePair]() mutable {
            quiet = window.isBusy() ? 0 : quiet + 1;
            if (quiet < 2 && clock->elapsed() < 60000)
                return;
            poll->stop();
            const bool timedOut = window.isBusy();
            delete clock;
            // The picture is saved whatever happened (it shows what went wrong), but the exit code
            // and the summary line say it, so a test of the shot can fail (issue 21, point 3).
            int rc = 0;
            if (timedOut) {
                std::fprintf(stderr, "checkpoint-inspector: still loading after 60 s; the screenshot shows a partial window\n");
                rc = 3;
            }
            if (!comparePair.isEmpty() && !window.compareByPath(comparePair[0], comparePair[1])) {
                std::fprintf(stderr, "checkpoint-inspector: --compare: %s or %s is not a checkpoint that could be opened\n",
                             qPrintable(comparePair[0]), qPrintable(comparePair[1]));
                rc = 3;
            }
            const int failed = window.runBrowser()->errors()->count();
            if (failed) {
                std::fprintf(stderr, "checkpoint-inspector: %d path(s) could not be opened (listed in the window)\n", failed);
                rc = 3;
            }
            if (!window.grab().save(file, "PNG")) {
                std::fprintf(stderr, "checkpoint-inspector: cannot write %s\n", qPrintable(file));
                QCoreApplication::exit(1);
                return;
            }
            // What the window held at the moment of the shot, for the tests to check.
            int checkpoints = 0;
            for (const RunDataPtr& run : window.runModel()->runs())
                checkpoints += static_cast<int>(run->checkpoints.size());
            std::printf("screenshot %s: %d run(s), %d checkpoint(s), %d unopened, %s view\n", qPrintable(file),
                        static_cast<int>(window.runModel()->runs().size()), checkpoints, failed,
                        window.mode() == MainWindow::Mode::Compare ? "compare" : "inspect");
            std::fflush(stdout);
            QCoreApplication::exit(rc);
        });
        poll->start(100);
    }
    return QApplication::exec();
}
