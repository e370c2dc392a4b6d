// SPDX-License-Identifier: MIT
// ObjectTreeModel: golden dumps of real files, shared objects and cycles shown once, memo bombs
// that stay small.
#include "uitestutil.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/models/objecttree.h"
#include "ui/models/objecttreemodel.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>

namespace {

std::shared_ptr<const ckpt::CheckpointFile> open(const QString& path)
{
    return ckpt::CheckpointFile::open(path.toStdString());
}

/// The first row whose Key is `key` under `parent`.
QModelIndex childByKey(const QAbstractItemModel& model, const QModelIndex& parent, const QString& key)
{
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, ObjectTreeModel::Key, parent);
        if (index.data().toString() == key)
            return index;
    }
    return {};
}

/// Rows of the fully expanded tree; stops counting past `cap` so a broken model fails instead of hanging.
long countRows(const QAbstractItemModel& model, const QModelIndex& parent = {}, long cap = 10'000'000)
{
    long n = 0;
    for (int row = 0; row < model.rowCount(parent) && n <= cap; ++row)
        n += 1 + countRows(model, model.index(row, 0, parent), cap - n);
    return n;
}

} // namespace

class TestObjectTreeModel : public QObject {
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

    void goldenStateDict()
    {
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(fixture(QStringLiteral("state_dict.pt"))));

        // Same content as `ckpt tree state_dict.pt`, plus the OrderedDict's BUILD state.
        const QStringList expected{
            QStringLiteral("state_dict.pt | collections.OrderedDict | 15 items"),
            QStringLiteral("  conv.weight | tensor | float32 [3, 2, 3, 3] 216 B"),
            QStringLiteral("  conv.bias | tensor | float32 [3] 12 B"),
            QStringLiteral("  bn.weight | tensor | float32 [3] 12 B"),
            QStringLiteral("  bn.bias | tensor | float32 [3] 12 B"),
            QStringLiteral("  bn.running_mean | tensor | float32 [3] 12 B"),
            QStringLiteral("  bn.running_var | tensor | float32 [3] 12 B"),
            QStringLiteral("  bn.num_batches_tracked | tensor | int64 [] 8 B"),
            QStringLiteral("  emb.weight | tensor | float32 [10, 4] 160 B"),
            QStringLiteral("  fc.weight | tensor | float32 [2, 7] 56 B"),
            QStringLiteral("  fc.bias | tensor | float32 [2] 8 B"),
            QStringLiteral("  bn1d.weight | tensor | float32 [2] 8 B"),
            QStringLiteral("  bn1d.bias | tensor | float32 [2] 8 B"),
            QStringLiteral("  bn1d.running_mean | tensor | float32 [2] 8 B"),
            QStringLiteral("  bn1d.running_var | tensor | float32 [2] 8 B"),
            QStringLiteral("  bn1d.num_batches_tracked | tensor | int64 [] 8 B"),
            QStringLiteral("  (attributes) | dict | 1 item"),
            QStringLiteral("    _metadata | collections.OrderedDict | 6 items"),
            QStringLiteral("      '' | dict | 1 item"),
            QStringLiteral("        version | int | 1"),
            QStringLiteral("      conv | dict | 1 item"),
            QStringLiteral("        version | int | 1"),
            QStringLiteral("      bn | dict | 1 item"),
            QStringLiteral("        version | int | 2"),
            QStringLiteral("      emb | dict | 1 item"),
            QStringLiteral("        version | int | 1"),
            QStringLiteral("      fc | dict | 1 item"),
            QStringLiteral("        version | int | 1"),
            QStringLiteral("      bn1d | dict | 1 item"),
            QStringLiteral("        version | int | 2"),
        };
        QVERIFY(UiTest::compareLines(UiTest::dumpModel(model), expected));
    }

    void goldenCycles()
    {
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(fixture(QStringLiteral("cycles.pt"))));
        // A container reached again is a leaf that names where it is expanded (cycles included).
        const QStringList expected{
            QStringLiteral("cycles.pt | dict | 5 items"),
            QStringLiteral("  list | list | 3 items"),
            QStringLiteral("    [0] | int | 1"),
            QStringLiteral("    [1] | str | 'two'"),
            QStringLiteral("    [2] | list | (same object as list)"),
            QStringLiteral("  dict | dict | 2 items"),
            QStringLiteral("    name | str | 'self-ref'"),
            QStringLiteral("    me | dict | (same object as dict)"),
            QStringLiteral("  obj | __main__.RunInfo | 5 items"),
            QStringLiteral("    name | str | 'cyc'"),
            QStringLiteral("    seed | int | 0"),
            QStringLiteral("    tags | list | 0 items"),
            QStringLiteral("    nested | dict | 2 items"),
            QStringLiteral("      created_by | str | 'make_checkpoints'"),
            QStringLiteral("      ok | bool | True"),
            QStringLiteral("    self_ref | __main__.RunInfo | (same object as obj)"),
            QStringLiteral("  shared_1 | dict | 1 item"),
            QStringLiteral("    v | int | 1"),
            QStringLiteral("  shared_2 | list | 2 items"),
            QStringLiteral("    [0] | dict | (same object as shared_1)"),
            QStringLiteral("    [1] | dict | (same object as shared_1)"),
        };
        QVERIFY(UiTest::compareLines(UiTest::dumpModel(model), expected));

        const QModelIndex me = childByKey(model, childByKey(model, model.index(0, 0), QStringLiteral("dict")), QStringLiteral("me"));
        QVERIFY(me.isValid());
        QVERIFY(me.data(ObjectTreeModel::IsRepeatRole).toBool());
        QVERIFY(!model.hasChildren(me));
        QCOMPARE(model.rowCount(me), 0);
    }

    void memoBombStaysSmall()
    {
        // 10^40 leaves when unrolled; one pickle memo entry per level when saved.
        const QString path = m_fixtures.filePath(QStringLiteral("memo_bomb.pkl"));
        const QString error = UiTest::runPython(QStringLiteral("import pickle, sys\n"
                                                               "a = ['leaf']\n"
                                                               "for _ in range(40): a = [a] * 10\n"
                                                               "open(sys.argv[1], 'wb').write(pickle.dumps({'bomb': a}, protocol=2))\n"),
                                                path);
        QVERIFY2(error.isEmpty(), qPrintable(error));

        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(path));
        // root + bomb + 40 levels of (1 expanded + 9 references) + the leaf
        QCOMPARE(countRows(model), 1 + 1 + 40 * 10 + 1);
        const QModelIndex bomb = childByKey(model, model.index(0, 0), QStringLiteral("bomb"));
        QCOMPARE(model.rowCount(bomb), 10);
        QVERIFY(!model.index(0, 0, bomb).data(ObjectTreeModel::IsRepeatRole).toBool());
        QCOMPARE(model.index(9, ObjectTreeModel::Value, bomb).data().toString(), QStringLiteral("(same object as bomb/0)"));
    }

    void keyPathsAndTypes()
    {
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(fixture(QStringLiteral("full_checkpoint.pt"))));
        const QModelIndex root = model.index(0, 0);
        const QModelIndex state = childByKey(model, childByKey(model, root, QStringLiteral("optimizer")), QStringLiteral("state"));
        const QModelIndex expAvg = childByKey(model, childByKey(model, state, QStringLiteral("0")), QStringLiteral("exp_avg"));
        QVERIFY(expAvg.isValid());
        QCOMPARE(expAvg.data(ObjectTreeModel::KeyPathRole).toString(), QStringLiteral("optimizer/state/0/exp_avg"));
        QCOMPARE(expAvg.siblingAtColumn(ObjectTreeModel::Type).data().toString(), QStringLiteral("tensor"));
        QCOMPARE(expAvg.siblingAtColumn(ObjectTreeModel::Value).data().toString(), QStringLiteral("float32 [3, 2, 3, 3] 216 B"));

        const QModelIndex config = childByKey(model, root, QStringLiteral("config"));
        QCOMPARE(config.siblingAtColumn(ObjectTreeModel::Type).data().toString(), QStringLiteral("argparse.Namespace"));
        QCOMPARE(root.data(ObjectTreeModel::KeyPathRole).toString(), QStringLiteral("(root)"));
        QVERIFY(!model.headerData(ObjectTreeModel::Value, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());

        model.setFile(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void hostileFilesStayLinear()
    {
        // Every container is expanded once, so the fully expanded tree has at most one row per
        // edge of the object graph (plus the root), whatever the file does with shared references.
        QTemporaryDir hostile;
        const QString error = UiTest::generateHostile(hostile.path());
        QVERIFY2(error.isEmpty(), qPrintable(error));
        int opened = 0;
        const QStringList names = QDir(hostile.path()).entryList(QDir::Files, QDir::Name);
        for (const QString& name : names) {
            std::shared_ptr<const ckpt::CheckpointFile> file;
            try {
                file = open(hostile.filePath(name));
            } catch (const ckpt::OpenError&) {
                continue; // refusing is the core's business (tests/core)
            }
            ++opened;
            std::size_t edges = 0;
            for (ckpt::NodeId id = 0; id < file->graph().size(); ++id)
                edges += objectChildren(file->graph(), id, false).size();
            ObjectTreeModel model;
            model.setFile(file);
            const long bound = static_cast<long>(edges) + 1;
            QVERIFY2(countRows(model, {}, bound) <= bound, qPrintable(name));
        }
        QVERIFY(opened > 10);
    }

    void rootThatIsATensor()
    {
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model);
        model.setFile(open(fixture(QStringLiteral("single_tensor.pt"))));
        QCOMPARE(UiTest::dumpModel(model), QStringList{QStringLiteral("single_tensor.pt | tensor | float32 [2, 3] 24 B")});
    }
};

QTEST_GUILESS_MAIN(TestObjectTreeModel)
#include "tst_objecttreemodel.moc"
