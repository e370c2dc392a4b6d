// SPDX-License-Identifier: MIT
// ImportsModel: one row per referenced global, dangerous rows in the palette's warning colour.
#include "uitestutil.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/models/importsmodel.h"
#include "ui/palettecolors.h"

#include <QAbstractItemModelTester>
#include <QPalette>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>

namespace {

std::shared_ptr<const ckpt::CheckpointFile> open(const QString& path)
{
    return ckpt::CheckpointFile::open(path.toStdString());
}

int rowOfGlobal(const QAbstractItemModel& model, const QString& global)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.index(row, ImportsModel::Global).data().toString() == global)
            return row;
    }
    return -1;
}

} // namespace

class TestImportsModel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_fixtures;
    QString m_dangerous;

private slots:
    void initTestCase()
    {
        QVERIFY(m_fixtures.isValid());
        const QString error = UiTest::generateCheckpoints(m_fixtures.path());
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // pickle.dumps only records the reduce target; nothing here ever runs it.
        m_dangerous = m_fixtures.filePath(QStringLiteral("dangerous.pkl"));
        const QString pyError = UiTest::runPython(
            QStringLiteral("import collections, os, pickle, sys\n"
                           "class Payload:\n"
                           "    def __reduce__(self): return (os.system, ('true',))\n"
                           "obj = collections.OrderedDict(ok=[1, 2], payload=Payload())\n"
                           "open(sys.argv[1], 'wb').write(pickle.dumps(obj, protocol=2))\n"),
            m_dangerous);
        QVERIFY2(pyError.isEmpty(), qPrintable(pyError));
    }

    void dangerousRowsStandOut()
    {
        ImportsModel model;
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester tester(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        proxy.setSortRole(ImportsModel::SortRole);
        const auto file = open(m_dangerous);
        model.setReport(file->imports());

        QCOMPARE(model.rowCount(), static_cast<int>(file->imports().entries.size()));
        QCOMPARE(model.rowCount(), 2);
        const int system = rowOfGlobal(model, QStringLiteral("posix.system"));
        QVERIFY(system >= 0);
        QCOMPARE(model.index(system, ImportsModel::Safety).data().toString(), QStringLiteral("dangerous"));
        QCOMPARE(model.index(system, ImportsModel::Count).data().toString(), QStringLiteral("1"));
        QVERIFY(!model.index(system, ImportsModel::Reason).data().toString().isEmpty());
        for (int column = 0; column < ImportsModel::ColumnCount; ++column)
            QCOMPARE(model.index(system, column).data(Qt::ForegroundRole).value<QColor>(), warningColor());

        const int ordered = rowOfGlobal(model, QStringLiteral("collections.OrderedDict"));
        QVERIFY(ordered >= 0);
        QCOMPARE(model.index(ordered, ImportsModel::Safety).data().toString(), QStringLiteral("safe"));
        QVERIFY(!model.index(ordered, ImportsModel::Safety).data(Qt::ForegroundRole).isValid());

        proxy.sort(ImportsModel::Safety, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, ImportsModel::Global).data().toString(), QStringLiteral("posix.system"));
        proxy.sort(ImportsModel::Safety, Qt::DescendingOrder);
        QCOMPARE(proxy.index(1, ImportsModel::Global).data().toString(), QStringLiteral("posix.system"));
    }

    void plainStateDictIsAllSafe()
    {
        ImportsModel model;
        QAbstractItemModelTester tester(&model);
        model.setReport(open(m_fixtures.filePath(QStringLiteral("state_dict.pt")))->imports());
        QVERIFY(model.rowCount() >= 3);
        QVERIFY(rowOfGlobal(model, QStringLiteral("torch._utils._rebuild_tensor_v2")) >= 0);
        for (int row = 0; row < model.rowCount(); ++row) {
            QCOMPARE(model.index(row, ImportsModel::Safety).data().toString(), QStringLiteral("safe"));
            QVERIFY(!model.index(row, ImportsModel::Global).data(Qt::ForegroundRole).isValid());
        }
        model.setReport({});
        QCOMPARE(model.rowCount(), 0);
    }

    void warningColourReadsOnItsBackground_data()
    {
        QTest::addColumn<QColor>("base");
        QTest::addColumn<QColor>("text");
        QTest::addRow("light") << QColor(Qt::white) << QColor(Qt::black);
        QTest::addRow("dark") << QColor(0x20, 0x20, 0x20) << QColor(0xe0, 0xe0, 0xe0);
        QTest::addRow("breeze dark") << QColor(0x1b, 0x1e, 0x20) << QColor(0xfc, 0xfc, 0xfc);
        QTest::addRow("solarized light") << QColor(0xfd, 0xf6, 0xe3) << QColor(0x58, 0x6e, 0x75);
        QTest::addRow("high contrast") << QColor(Qt::black) << QColor(Qt::white);
    }

    void warningColourReadsOnItsBackground()
    {
        QFETCH(QColor, base);
        QFETCH(QColor, text);
        QPalette palette;
        palette.setColor(QPalette::Base, base);
        palette.setColor(QPalette::Text, text);
        const QColor warning = warningColor(palette);
        // Contrast ratio per WCAG relative luminance: at least 4.5 for normal text.
        const auto luminance = [](const QColor& c) {
            const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
            return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
        };
        const double l1 = luminance(warning), l2 = luminance(base);
        const double contrast = (qMax(l1, l2) + 0.05) / (qMin(l1, l2) + 0.05);
        QVERIFY2(contrast >= 4.5, qPrintable(QString::number(contrast)));
        QVERIFY(warning.red() > warning.green() && warning.red() > warning.blue());
    }
};

CKPT_UI_TEST_MAIN(TestImportsModel)
#include "tst_importsmodel.moc"
