// SPDX-License-Identifier: MIT
// TensorTableModel and TensorProxyModel against what PyTorch says it saved (*.expected.json).
#include "uitestutil.h"

#include "core/checkpoint_file.h"
#include "ui/models/tensorproxymodel.h"
#include "ui/models/tensortablemodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QTemporaryDir>

namespace {

std::shared_ptr<const ckpt::CheckpointFile> open(const QString& path)
{
    return ckpt::CheckpointFile::open(path.toStdString());
}

QString cell(const QAbstractItemModel& model, int row, TensorTableModel::Column column)
{
    return model.index(row, column).data().toString();
}

int rowOfKey(const QAbstractItemModel& model, const QString& key)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        if (cell(model, row, TensorTableModel::Key) == key)
            return row;
    }
    return -1;
}

QString shapeText(const QJsonArray& shape)
{
    QStringList dims;
    for (const auto& d : shape)
        dims.append(QString::number(d.toInteger()));
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QList<qlonglong> columnNumbers(const QAbstractItemModel& model, TensorTableModel::Column column)
{
    QList<qlonglong> out;
    for (int row = 0; row < model.rowCount(); ++row)
        out.append(model.index(row, column).data(TensorTableModel::SortRole).toLongLong());
    return out;
}

} // namespace

class TestTensorTableModel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_fixtures;

    QString fixture(const QString& name) const { return m_fixtures.filePath(name); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_fixtures.isValid());
        const QString error = UiTest::generateCheckpoints(m_fixtures.path());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void matchesTorchGroundTruth_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addRow("dtypes") << QStringLiteral("dtypes.pt");
        QTest::addRow("dtypes legacy") << QStringLiteral("dtypes_legacy.pt");
        QTest::addRow("views") << QStringLiteral("views.pt");
        QTest::addRow("full checkpoint") << QStringLiteral("full_checkpoint.pt");
        QTest::addRow("scalars and empty") << QStringLiteral("scalars_empty.pt");
    }

    void matchesTorchGroundTruth()
    {
        QFETCH(QString, file);
        TensorTableModel model;
        TensorProxyModel proxy;
        QAbstractItemModelTester tester(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        model.setFile(open(fixture(file)));

        const QJsonObject truth = UiTest::readJson(fixture(file + QStringLiteral(".expected.json")));
        const QJsonArray tensors = truth.value(QStringLiteral("tensors")).toArray();
        QVERIFY(!tensors.isEmpty());
        QCOMPARE(model.rowCount(), tensors.size() + truth.value(QStringLiteral("special_tensors")).toArray().size());
        QCOMPARE(proxy.rowCount(), model.rowCount());
        for (const auto& value : tensors) {
            const QJsonObject t = value.toObject();
            QStringList keyParts;
            for (const auto& part : t.value(QStringLiteral("key")).toArray())
                keyParts.append(part.isString() ? part.toString() : QString::number(part.toInteger()));
            // parts joined with '/', as `ckpt` prints them
            const QString key = keyParts.join(QLatin1Char('/'));
            const int row = rowOfKey(model, key);
            QVERIFY2(row >= 0, qPrintable(key));
            QCOMPARE(cell(model, row, TensorTableModel::DType), t.value(QStringLiteral("dtype")).toString());
            const QJsonArray shape = t.value(QStringLiteral("shape")).toArray();
            QCOMPARE(cell(model, row, TensorTableModel::Shape), shapeText(shape));
            qint64 numel = 1;
            for (const auto& d : shape)
                numel *= d.toInteger();
            QCOMPARE(cell(model, row, TensorTableModel::Numel), QString::number(numel));
            QCOMPARE(model.index(row, TensorTableModel::Numel).data(TensorTableModel::SortRole).toLongLong(), numel);
            QCOMPARE(cell(model, row, TensorTableModel::Layout), QStringLiteral("strided"));
            QCOMPARE(cell(model, row, TensorTableModel::Device), QStringLiteral("cpu"));
            const bool parameter = t.value(QStringLiteral("is_parameter")).toBool();
            QCOMPARE(cell(model, row, TensorTableModel::Note).contains(QStringLiteral("parameter")), parameter);
        }
    }

    void specificCells()
    {
        TensorTableModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(fixture(QStringLiteral("state_dict.pt"))));
        QCOMPARE(model.rowCount(), 15);
        QCOMPARE(model.columnCount(), int(TensorTableModel::ColumnCount));
        const QStringList first{QStringLiteral("conv.weight"), QStringLiteral("float32"), QStringLiteral("[3, 2, 3, 3]"),
                                QStringLiteral("54"),          QStringLiteral("216 B"),   QStringLiteral("strided"),
                                QStringLiteral("cpu"),         QString()};
        for (int column = 0; column < TensorTableModel::ColumnCount; ++column)
            QCOMPARE(cell(model, 0, static_cast<TensorTableModel::Column>(column)), first.at(column));
        QCOMPARE(cell(model, 6, TensorTableModel::Key), QStringLiteral("bn.num_batches_tracked")); // as `ckpt tensors` prints it
        QCOMPARE(cell(model, 6, TensorTableModel::Shape), QStringLiteral("[]"));
        QCOMPARE(cell(model, 6, TensorTableModel::Size), QStringLiteral("8 B"));
        QCOMPARE(model.headerData(TensorTableModel::Numel, Qt::Horizontal).toString(), QStringLiteral("Numel"));
        QVERIFY(!model.headerData(TensorTableModel::Size, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
    }

    void notesAndLayouts()
    {
        TensorTableModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(fixture(QStringLiteral("views.pt"))));
        QVERIFY(cell(model, rowOfKey(model, QStringLiteral("same_2")), TensorTableModel::Note).contains(QStringLiteral("same tensor")));
        QVERIFY(!cell(model, rowOfKey(model, QStringLiteral("same_1")), TensorTableModel::Note).contains(QStringLiteral("same tensor")));
        QVERIFY(cell(model, rowOfKey(model, QStringLiteral("param")), TensorTableModel::Note).contains(QStringLiteral("parameter")));

        model.setFile(open(fixture(QStringLiteral("special_tensors.pt"))));
        QCOMPARE(cell(model, rowOfKey(model, QStringLiteral("sparse_coo")), TensorTableModel::Layout), QStringLiteral("sparse_coo"));
        QCOMPARE(cell(model, rowOfKey(model, QStringLiteral("q_per_tensor")), TensorTableModel::DType), QStringLiteral("qint8"));
        QCOMPARE(cell(model, rowOfKey(model, QStringLiteral("meta")), TensorTableModel::Device), QStringLiteral("meta"));
    }

    void sortsNumbersAsNumbers()
    {
        TensorTableModel model;
        TensorProxyModel proxy;
        QAbstractItemModelTester tester(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        model.setFile(open(fixture(QStringLiteral("state_dict.pt"))));

        proxy.sort(TensorTableModel::Numel, Qt::DescendingOrder);
        QList<qlonglong> numels = columnNumbers(proxy, TensorTableModel::Numel);
        QList<qlonglong> expected = numels;
        std::sort(expected.begin(), expected.end(), std::greater<>());
        QCOMPARE(numels, expected);
        QCOMPARE(cell(proxy, 0, TensorTableModel::Numel), QStringLiteral("54")); // as text "8" > "54"
        QCOMPARE(cell(proxy, 1, TensorTableModel::Numel), QStringLiteral("40"));

        proxy.sort(TensorTableModel::Size, Qt::AscendingOrder);
        const QList<qlonglong> sizes = columnNumbers(proxy, TensorTableModel::Size);
        QVERIFY(std::is_sorted(sizes.begin(), sizes.end()));
        QCOMPARE(cell(proxy, proxy.rowCount() - 1, TensorTableModel::Size), QStringLiteral("216 B"));

        proxy.sort(-1); // back to file order
        QCOMPARE(cell(proxy, 0, TensorTableModel::Key), QStringLiteral("conv.weight"));
    }

    void filtersByKey()
    {
        TensorTableModel model;
        TensorProxyModel proxy;
        QAbstractItemModelTester tester(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        model.setFile(open(fixture(QStringLiteral("full_checkpoint.pt"))));

        proxy.setKeyFilter(QStringLiteral("BN1D"));
        QCOMPARE(proxy.rowCount(), 5); // model/bn1d.*, case-insensitive
        for (int row = 0; row < proxy.rowCount(); ++row)
            QVERIFY(cell(proxy, row, TensorTableModel::Key).startsWith(QStringLiteral("model/bn1d.")));
        proxy.setKeyFilter(QStringLiteral("exp_avg_sq"));
        QCOMPARE(proxy.rowCount(), 9);
        proxy.setKeyFilter(QStringLiteral("no such key"));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setKeyFilter(QString());
        QCOMPARE(proxy.rowCount(), model.rowCount());

        proxy.setKeyFilter(QStringLiteral("exp_avg"));
        model.setFile(nullptr); // a reset under an active filter
        QCOMPARE(proxy.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestTensorTableModel)
#include "tst_tensortablemodel.moc"
