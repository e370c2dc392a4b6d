// SPDX-License-Identifier: MIT
// The Timeline tab on the sample runs' resume faults: the resume at step 200 listed and drawn as a
// band, the faulty part's strip broken there, and one activation opens the compare view of
// checkpoint-0000200 and checkpoint-0000300 with that part selected. A clean run shows no band.
#include "ui/checkpointview.h"
#include "ui/compareview.h"
#include "ui/mainwindow.h"
#include "ui/pages/timelinepage.h"
#include "uitestutil.h"

#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QListWidget>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QUrl>
#include "ui/models/findingsmodel.h"
#include "ui/plots/qcustomplotfence.h"

namespace {

QString sample(const QString& rel)
{
    return QDir(QStringLiteral(CKPT_SAMPLE_RUNS)).filePath(rel);
}

} // namespace

class TestTimelinePage : public QObject {
    Q_OBJECT

private slots:
    void resumeBandOpensTheCompare_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<QString>("section");
        QTest::newRow("scaler-reset") << "scaler-reset" << "(A)";
        QTest::newRow("optimizer-not-restored") << "optimizer-not-restored" << "(O)";
        QTest::newRow("rng-not-restored") << "rng-not-restored" << "(R)";
        QTest::newRow("data-cursor-wrong") << "data-cursor-wrong" << "(D)";
        QTest::newRow("scheduler-stepped-twice") << "scheduler-stepped-twice" << "(L)";
    }

    void resumeBandOpensTheCompare()
    {
        QFETCH(QString, fault);
        QFETCH(QString, section);
        MainWindow window(MainWindow::Settings::Ignore);
        window.resize(1400, 860);
        window.show();
        QSignalSpy finished(&window, &MainWindow::loadsFinished);
        window.openPaths({sample(QStringLiteral("broken/") + fault)});
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 60000);
        QVERIFY(window.selectTab(QStringLiteral("timeline")));
        TimelinePage* page = window.checkpointView()->timelinePage();
        QTRY_COMPARE(page->resumeList()->count(), 1);
        // the run's verdict first, as ckpt check and the report open with it (a pair's finding once)
        QVERIFY2(page->headline().startsWith(QStringLiteral("Verdict: ")) && page->headline().contains(QStringLiteral(" error")),
                 qPrintable(page->headline()));
        QVERIFY(page->resumeList()->item(0)->text().startsWith(QStringLiteral("Resume at step 200: checkpoint-0000200 → checkpoint-0000300")));
        QVERIFY(page->stripNames().size() >= 5);
        // the band is drawn in every row (the loss and each strip); the top one takes the click
        int bands = 0;
        for (int i = 0; i < page->plot()->itemCount(); ++i)
            bands += page->plot()->item(i)->property("band").isValid();
        QCOMPARE(bands, 1 + page->stripNames().size());

        emit page->resumeList()->itemActivated(page->resumeList()->item(0));
        QCOMPARE(window.mode(), MainWindow::Mode::Compare);
        CompareView* compare = window.compareView();
        QVERIFY(compare->chooserA()->currentText().contains(QStringLiteral("checkpoint-0000200")));
        QVERIFY(compare->chooserB()->currentText().contains(QStringLiteral("checkpoint-0000300")));
        const QModelIndex selected = compare->comparisonView()->currentIndex();
        QVERIFY2(selected.data().toString().endsWith(section), qPrintable(selected.data().toString()));
        QVERIFY(compare->pairFindingsModel()->rowCount() > 0); // the pair's findings on top
    }

    void htmlReportOfEverySampleRun()
    {
        // File › Export report / --report: one HTML file with its sections and the plots as PNG
        QTemporaryDir tmp;
        MainWindow window(MainWindow::Settings::Ignore);
        const QStringList runs = {QStringLiteral("broken/scaler-reset"), QStringLiteral("tiny-mlp"), QStringLiteral("ddp4-mlp"),
                                  QStringLiteral("hf-trainer"), QStringLiteral("lightning"), QStringLiteral("deepspeed"),
                                  QStringLiteral("accelerate"), QStringLiteral("dcp"), QStringLiteral("dcp-no-collectives"),
                                  QStringLiteral("broken/hash-mismatch"), QStringLiteral("broken/missing-rank-rng"),
                                  QStringLiteral("broken/no-complete-marker"), QStringLiteral("broken/data-cursor-wrong"),
                                  QStringLiteral("broken/optimizer-not-restored"), QStringLiteral("broken/rng-not-restored"),
                                  QStringLiteral("broken/scheduler-stepped-twice")};
        for (const QString& run : runs) {
            const QString file = tmp.filePath(QString(run).replace(QLatin1Char('/'), QLatin1Char('_')) + QStringLiteral(".html"));
            QSignalSpy done(&window, &MainWindow::reportExported);
            window.exportReport(sample(run), file);
            QVERIFY2(done.wait(120000), qPrintable(run));
            QVERIFY2(done.at(0).at(1).toString().isEmpty(), qPrintable(run + QStringLiteral(": ") + done.at(0).at(1).toString()));
            QFile f(file);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString html = QString::fromUtf8(f.readAll());
            QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
            for (const char* id : {"findings", "states", "validation", "timeline", "loss-lr", "moments"})
                QVERIFY2(html.contains(QStringLiteral("id=\"%1\"").arg(QLatin1String(id))), qPrintable(run + QStringLiteral(": ") + QLatin1String(id)));
            // every embedded picture decodes as a PNG, and the timeline has one
            const QRegularExpression png(QStringLiteral("data:image/png;base64,([A-Za-z0-9+/=]+)"));
            int images = 0;
            for (auto it = png.globalMatch(html); it.hasNext();) {
                QImage image;
                QVERIFY(image.loadFromData(QByteArray::fromBase64(it.next().captured(1).toLatin1()), "PNG"));
                QVERIFY(image.width() >= 800);
                ++images;
            }
            QVERIFY2(images >= 2, qPrintable(run));
            if (run == QLatin1String("broken/scaler-reset")) {
                QVERIFY(html.contains(QStringLiteral("id=\"pair\"")));
                QVERIFY(html.contains(QStringLiteral("scaler.unreachable")));
                QVERIFY(html.contains(QStringLiteral("the two sides of the resume at step 200")));
            }
        }
    }

    // The report in a real browser (issue 42): Debian's headless Chromium renders the exported HTML to a
    // PNG, which decodes and is not blank; the info groups are folded in <details>. The PNG is kept in
    // CKPT_REPORT_PNG when that is set, to be looked at.
    void reportRendersInChromium()
    {
        const QString chromium = QStandardPaths::findExecutable(QStringLiteral("chromium"));
        if (chromium.isEmpty())
            QSKIP("SKIPPED LOUDLY: no chromium on PATH (packaging/install-deps.sh installs Debian's chromium); the report was not rendered in a browser");
        QTemporaryDir tmp;
        MainWindow window(MainWindow::Settings::Ignore);
        const QString html = tmp.filePath(QStringLiteral("report.html"));
        QSignalSpy done(&window, &MainWindow::reportExported);
        window.exportReport(sample(QStringLiteral("broken/scaler-reset")), html);
        QVERIFY(done.wait(120000));
        QFile f(html);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        QVERIFY(text.indexOf(QStringLiteral("id=\"verdict\"")) < text.indexOf(QStringLiteral("id=\"resumes\"")));
        QVERIFY(text.indexOf(QStringLiteral("id=\"resumes\"")) < text.indexOf(QStringLiteral("id=\"findings\"")));
        QVERIFY(text.indexOf(QStringLiteral("id=\"findings\"")) < text.indexOf(QStringLiteral("id=\"timeline\"")));
        QVERIFY(text.contains(QStringLiteral("<details>")));
        const QString png = qEnvironmentVariableIsSet("CKPT_REPORT_PNG") ? qEnvironmentVariable("CKPT_REPORT_PNG") : tmp.filePath(QStringLiteral("report.png"));
        QProcess browser;
        browser.start(chromium, {QStringLiteral("--headless"), QStringLiteral("--no-sandbox"), QStringLiteral("--disable-gpu"),
                                 QStringLiteral("--disable-quic"), QStringLiteral("--no-first-run"), QStringLiteral("--disable-background-networking"),
                                 QStringLiteral("--disable-component-update"), QStringLiteral("--disable-sync"), QStringLiteral("--hide-scrollbars"),
                                 QStringLiteral("--user-data-dir=") + tmp.filePath(QStringLiteral("profile")),
                                 QStringLiteral("--window-size=1280,3000"), QStringLiteral("--screenshot=") + png,
                                 QUrl::fromLocalFile(html).toString()});
        QVERIFY2(browser.waitForFinished(120000), "chromium did not finish");
        QImage image;
        QVERIFY2(image.load(png, "PNG"), qPrintable(QStringLiteral("chromium wrote no PNG: ") + QString::fromUtf8(browser.readAllStandardError().right(2000))));
        QCOMPARE(image.width(), 1280);
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7) {
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        }
        QVERIFY2(colours.size() > 50, "the rendered report is blank");
    }

    void cleanRunHasNoBand()
    {
        MainWindow window(MainWindow::Settings::Ignore);
        window.show();
        QSignalSpy finished(&window, &MainWindow::loadsFinished);
        window.openPaths({sample(QStringLiteral("tiny-mlp"))});
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 60000);
        QVERIFY(window.selectTab(QStringLiteral("timeline")));
        TimelinePage* page = window.checkpointView()->timelinePage();
        QTRY_VERIFY(!page->stripNames().isEmpty());
        QCOMPARE(page->resumeList()->count(), 0);
        QVERIFY(page->resumeList()->isHidden());
        QVERIFY2(page->headline().startsWith(QStringLiteral("Verdict: nothing inconsistent found")), qPrintable(page->headline()));
    }
};

CKPT_UI_TEST_MAIN(TestTimelinePage)
#include "tst_timelinepage.moc"
