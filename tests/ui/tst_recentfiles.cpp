// SPDX-License-Identifier: MIT
// RecentFiles: most recent first, no duplicates, at most ten, absolute paths (QSettings in test mode).
#include "uitestutil.h"

#include "ui/recentfiles.h"

#include <QStandardPaths>

class TestRecentFiles : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // ~/.qttest: never the user's settings
        RecentFiles::clear();
    }

    void mostRecentFirstWithoutDuplicates()
    {
        RecentFiles::add(QStringLiteral("/data/a.pt"));
        RecentFiles::add(QStringLiteral("/data/b.pt"));
        RecentFiles::add(QStringLiteral("/data/a.pt"));
        QCOMPARE(RecentFiles::load(), (QStringList{QStringLiteral("/data/a.pt"), QStringLiteral("/data/b.pt")}));
    }

    void keepsTen()
    {
        for (int i = 0; i < 15; ++i)
            RecentFiles::add(QStringLiteral("/data/%1.pt").arg(i));
        const QStringList list = RecentFiles::load();
        QCOMPARE(list.size(), RecentFiles::MaxEntries);
        QCOMPARE(list.first(), QStringLiteral("/data/14.pt"));
        QCOMPARE(list.last(), QStringLiteral("/data/5.pt"));
    }

    void storesAbsolutePaths()
    {
        RecentFiles::add(QStringLiteral("relative.pt"));
        QCOMPARE(RecentFiles::load().first(), QDir::current().absoluteFilePath(QStringLiteral("relative.pt")));
    }

    void cleanupTestCase()
    {
        RecentFiles::clear();
        QVERIFY(RecentFiles::load().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestRecentFiles)
#include "tst_recentfiles.moc"
