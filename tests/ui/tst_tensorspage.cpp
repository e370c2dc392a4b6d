// SPDX-License-Identifier: MIT
// The Tensors data page on the real sample runs: the model's golden dumps, the rows checked
// against the training state read by the core on its own, and the page's widgets (filter,
// sorting, selection, histogram, shard map on a real DCP folder, copy, stale loads).
#include "pagetestutil.h"

#include "ckpt/state/training_state.h"
#include "ui/pages/checkpointtensorspage.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/tensorlistmodel.h"
#include "ui/plots/histogramplot.h"
#include "ui/plots/shardmapplot.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QClipboard>
#include <QLineEdit>
#include <QSignalSpy>
#include <QThreadPool>
#include <QSortFilterProxyModel>
#include <QHeaderView>
#include <QJsonArray>
#include <QTemporaryDir>

#include <cmath>

namespace {

QString cell(const QAbstractItemModel& model, int row, int column)
{
    return model.index(row, column).data().toString();
}

bool loadAndWait(CheckpointTensorsPage& page, std::shared_ptr<const ckpt::TrainingState> state)
{
    QSignalSpy loaded(&page, &CheckpointTensorsPage::tensorsLoaded);
    page.setCheckpoint(std::move(state));
    return loaded.wait(20000) && !page.isBusy();
}

bool loadStatsAndWait(CheckpointTensorsPage& page, std::shared_ptr<const ckpt::TrainingState> state)
{
    QSignalSpy done(&page, &CheckpointTensorsPage::statsFinished);
    page.setCheckpoint(std::move(state));
    return done.wait(30000) && !page.isBusy() && !page.isComputingStats();
}

// PyTorch's own figures for every tensor of the files in a checkpoint folder, by "<file>|<key path>".
const char* const kTorchStats = R"(
import json, math, sys, torch
folder, names = sys.argv[1], sys.argv[2].split(",")
out = {}
def walk(obj, path, name):
    if isinstance(obj, torch.Tensor):
        t = obj.double().flatten()
        f = t[torch.isfinite(t)]
        n = f.numel()
        nan = lambda: float("nan")
        out[name + "|" + "/".join(path)] = {
            "min": f.min().item() if n else nan(), "max": f.max().item() if n else nan(),
            "mean": f.mean().item() if n else nan(), "std": f.std().item() if n > 1 else nan(),
            "l2": f.norm().item(), "absmax": f.abs().max().item() if n else nan(),
            "zeros": int((t == 0).sum().item()), "numel": t.numel()}
    elif isinstance(obj, dict):
        for k, v in obj.items():
            walk(v, path + [str(k)], name)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            walk(v, path + [str(i)], name)
for name in names:
    walk(torch.load(folder + "/" + name, map_location="cpu"), [], name)
print(json.dumps(out, allow_nan=True))
)";

QJsonObject torchStats(const QString& folder, const QStringList& files)
{
    QProcess python;
    python.start(QStringLiteral(CKPT_TEST_PYTHON),
                 {QStringLiteral("-c"), QString::fromUtf8(kTorchStats), folder, files.join(QLatin1Char(','))});
    if (!python.waitForFinished(60000) || python.exitCode() != 0) {
        qWarning().noquote() << python.readAllStandardError();
        return {};
    }
    // Python writes NaN as a bare token, which QJsonDocument rejects: make it a string.
    QByteArray json = python.readAllStandardOutput();
    json.replace("NaN", "\"nan\"");
    return QJsonDocument::fromJson(json).object();
}

bool near(double actual, const QJsonValue& expected)
{
    if (expected.isString())
        return std::isnan(actual);
    const double e = expected.toDouble();
    return std::abs(actual - e) <= 1e-9 * std::max(1.0, std::abs(e));
}

} // namespace

class TestTensorsPage : public QObject {
    Q_OBJECT

private slots:
    void modelDump_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("expected");
        QTest::addRow("ddp4-mlp") << QStringLiteral("ddp4-mlp/checkpoint-0000300") << QStringLiteral("tensors_ddp4-mlp");
        QTest::addRow("tiny-mlp") << QStringLiteral("tiny-mlp/checkpoint-0000150") << QStringLiteral("tensors_tiny-mlp");
        QTest::addRow("hf-trainer") << QStringLiteral("hf-trainer/checkpoint-60") << QStringLiteral("tensors_hf-trainer");
        QTest::addRow("lightning") << QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")
                                   << QStringLiteral("tensors_lightning");
    }

    // Rows that merge ranks' pieces (ZeRO partitions) or hold DCP chunks, in golden dumps; the
    // page's summary counts logical tensors and names the groups.
    void groupedModelDump_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("summary");
        QTest::addRow("deepspeed") << QStringLiteral("deepspeed/global_step40") << QStringLiteral("tensors_deepspeed")
                                   << QStringLiteral("10 tensors (3 sharded groups, 1 replica group), ");
        QTest::addRow("dcp") << QStringLiteral("dcp/step-30") << QStringLiteral("tensors_dcp") << QString();
    }

    void groupedModelDump()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, expected);
        QFETCH(QString, summary);
        TensorListModel model;
        QAbstractItemModelTester tester(&model);
        CheckpointTensors tensors = collectTensors(*PageTest::state(checkpoint));
        QVERIFY2(tensors.errors.isEmpty(), qPrintable(tensors.errors.join(QLatin1Char('\n'))));
        model.setTensors(std::move(tensors.rows));
        QVERIFY(PageTest::matchesExpected(UiTest::dumpModel(model), expected));

        CheckpointTensorsPage page;
        QVERIFY(loadStatsAndWait(page, PageTest::state(checkpoint)));
        int logical = 0;
        for (const TensorRow& row : page.model()->tensors())
            logical += row.group < 0;
        QVERIFY(page.summaryText().startsWith(QStringLiteral("%1 tensors").arg(logical)));
        if (!summary.isEmpty())
            QVERIFY2(page.summaryText().startsWith(summary), qPrintable(page.summaryText()));
        // The file or ranks of a row shown next to its name, however long the names are.
        QCOMPARE(page.view()->horizontalHeader()->visualIndex(TensorListModel::File), 1);
        QVERIFY(page.view()->columnWidth(TensorListModel::Name) <= 320);
    }

    void modelDump()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, expected);
        TensorListModel model;
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester tester(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        proxy.setSortRole(TensorListModel::SortRole);

        const auto state = PageTest::state(checkpoint);
        CheckpointTensors tensors = collectTensors(*state);
        QVERIFY2(tensors.errors.isEmpty(), qPrintable(tensors.errors.join(QLatin1Char('\n'))));
        model.setTensors(std::move(tensors.rows));
        QVERIFY(PageTest::matchesExpected(UiTest::dumpModel(model), expected));

        // The model part read by the training-state reader on its own agrees: every parameter
        // is a row of the model file with the same dtype, shape and numel.
        QVERIFY(state->model);
        const QString modelFile = QFileInfo(QString::fromStdString(state->model->from.file)).fileName();
        for (const ckpt::ParameterEntry& p : state->model->parameters) {
            bool found = false;
            for (const TensorRow& row : model.tensors()) {
                if (QFileInfo(row.file).fileName() != modelFile || !row.name.endsWith(QString::fromStdString(p.name)))
                    continue;
                found = true;
                QCOMPARE(row.dtype, QString::fromStdString(p.dtype));
                QCOMPARE(row.shape, p.shape);
                QCOMPARE(row.numel, p.numel);
            }
            QVERIFY2(found, p.name.c_str());
        }
        // Statistics columns stay empty until computed; sorting by them keeps every row.
        proxy.sort(TensorListModel::L2, Qt::DescendingOrder);
        QCOMPARE(proxy.rowCount(), model.rowCount());
        QVERIFY(PageTest::everyHeaderHasTooltip(model));
    }

    void statsArriveRowByRow()
    {
        TensorListModel model;
        QAbstractItemModelTester tester(&model);
        CheckpointTensors tensors = collectTensors(*PageTest::state(QStringLiteral("tiny-mlp/checkpoint-0000050")));
        model.setTensors(std::move(tensors.rows));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        TensorStatsView stats;
        stats.min = -1.5;
        stats.max = 2;
        stats.l2 = 3.25;
        stats.nan = 2;
        stats.histLo = -1.5;
        stats.histHi = 2;
        stats.histCounts = {1, 2, 3};
        model.setStats(1, {stats});
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().at(0).toModelIndex(), model.index(1, TensorListModel::Min));
        QCOMPARE(cell(model, 1, TensorListModel::Min), QStringLiteral("-1.5"));
        QCOMPARE(cell(model, 1, TensorListModel::L2), QStringLiteral("3.25"));
        QCOMPARE(cell(model, 1, TensorListModel::NonFinite), QStringLiteral("2 nan, 0 +inf, 0 -inf"));
        QCOMPARE(cell(model, 0, TensorListModel::Min), QString());
        model.setStats(model.rowCount(), {stats}); // out of range: ignored
        QCOMPARE(changed.count(), 1);
    }

    void pageLoadsFiltersSortsAndCopies()
    {
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QAbstractItemModelTester proxyTester(page.proxy());
        QVERIFY(loadAndWait(page, PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300"))));
        QVERIFY2(page.errors().isEmpty(), qPrintable(page.errors().join(QLatin1Char('\n'))));
        const int rows = page.model()->rowCount();
        QVERIFY(rows > 6);
        QCOMPARE(page.summaryText(), tr("%1 tensors, %2").arg(rows).arg(page.summaryText().section(QStringLiteral(", "), 1)));

        page.filterEdit()->setText(QStringLiteral("EXP_AVG_SQ"));
        QCOMPARE(page.proxy()->rowCount(), 6);
        QVERIFY(page.summaryText().startsWith(QStringLiteral("6 of ")));
        page.filterEdit()->clear();
        QCOMPARE(page.proxy()->rowCount(), rows);

        page.view()->sortByColumn(TensorListModel::Numel, Qt::DescendingOrder);
        QCOMPARE(cell(*page.proxy(), 0, TensorListModel::Numel), QStringLiteral("5056")); // a torch generator state
        QCOMPARE(cell(*page.proxy(), 4, TensorListModel::Numel), QStringLiteral("4096")); // then the 64x64 weight and moments
        QVERIFY(page.selectTensor(QStringLiteral("3.weight"), QStringLiteral("model.pt")));
        QVERIFY(page.shardMap()->isHidden());

        page.view()->selectionModel()->clearSelection();
        page.view()->selectionModel()->select(page.view()->currentIndex(),
                                              QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const QString copied = page.view()->selectedText();
        QVERIFY(copied.startsWith(QStringLiteral("3.weight\tfloat32\t[64, 64]\t4096\t16.0 KiB\tmodel.pt\t")));
        QApplication::clipboard()->clear();
        QTest::keySequence(page.view(), QKeySequence::Copy);
        QCOMPARE(QApplication::clipboard()->text(), copied);
        PageTest::grab(page, QStringLiteral("tensors_ddp4"));
    }

    // Every statistic of every tensor of the model and optimizer files against PyTorch's own.
    void statsMatchPyTorch()
    {
        const QString folder = PageTest::sampleRun(QStringLiteral("ddp4-mlp/checkpoint-0000200"));
        const QJsonObject truth = torchStats(folder, {QStringLiteral("model.pt"), QStringLiteral("optimizer.pt")});
        QVERIFY(!truth.isEmpty());
        CheckpointTensorsPage page;
        QSignalSpy progress(&page, &CheckpointTensorsPage::progress);
        QAbstractItemModelTester tester(page.model());
        QAbstractItemModelTester proxyTester(page.proxy());
        QVERIFY(loadStatsAndWait(page, PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000200"))));
        const TensorListModel& model = *page.model();
        int checked = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const TensorRow& t = model.tensors()[static_cast<std::size_t>(row)];
            QVERIFY2(t.stats && t.stats->problem.isEmpty(), qPrintable(t.name));
            const QJsonObject e = truth.value(t.file + QLatin1Char('|') + t.name).toObject();
            if (e.isEmpty())
                continue; // the rng files: PyTorch has no statistics of a uint8 state to compare
            const auto sorted = [&](TensorListModel::Column c) {
                return model.index(row, c).data(TensorListModel::SortRole).toDouble();
            };
            QVERIFY2(near(sorted(TensorListModel::Min), e[QStringLiteral("min")]), qPrintable(t.name));
            QVERIFY2(near(sorted(TensorListModel::Max), e[QStringLiteral("max")]), qPrintable(t.name));
            QVERIFY2(near(sorted(TensorListModel::Mean), e[QStringLiteral("mean")]), qPrintable(t.name));
            QVERIFY2(near(t.stats->std, e[QStringLiteral("std")]), qPrintable(t.name));
            QVERIFY2(near(sorted(TensorListModel::L2), e[QStringLiteral("l2")]), qPrintable(t.name));
            QVERIFY2(near(sorted(TensorListModel::AbsMax), e[QStringLiteral("absmax")]), qPrintable(t.name));
            QCOMPARE(qint64(t.stats->zeros), e[QStringLiteral("zeros")].toInteger());
            uint64_t binned = 0;
            for (const uint64_t c : t.stats->histCounts)
                binned += c;
            QCOMPARE(qint64(binned), e[QStringLiteral("numel")].toInteger()); // all finite here
            ++checked;
        }
        QCOMPARE(checked, 24); // 6 parameters, and step, exp_avg, exp_avg_sq of each
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last().at(0).toInt(), model.rowCount()); // the statistics of every row
        QCOMPARE(progress.last().at(1).toInt(), model.rowCount());

        // the selected tensor's histogram: 64 bins, linear or over log10 |x|
        QVERIFY(page.selectTensor(QStringLiteral("optimizer/state/2/exp_avg_sq")));
        QCOMPARE(page.histogram()->barCount(), 64);
        QCOMPARE(page.histogram()->xLabel(), QStringLiteral("value"));
        page.logHistogram()->setChecked(true);
        QCOMPARE(page.histogram()->barCount(), 64);
        QCOMPARE(page.histogram()->xLabel(), QStringLiteral("log10 |x|"));
        QVERIFY(page.histogram()->xRange().upper < 0); // exp_avg_sq are small: log10 below 0
        PageTest::grab(page, QStringLiteral("tensors_stats_log"));
        page.logHistogram()->setChecked(false);

        // sorting by a statistic, and the dump with statistics filled in
        page.view()->sortByColumn(TensorListModel::AbsMax, Qt::DescendingOrder);
        double previous = INFINITY;
        for (int row = 0; row < page.proxy()->rowCount(); ++row) {
            const double v = page.proxy()->index(row, TensorListModel::AbsMax).data(TensorListModel::SortRole).toDouble();
            QVERIFY(v <= previous);
            previous = v;
        }
        QVERIFY(PageTest::matchesExpected(UiTest::dumpModel(model), QStringLiteral("tensors_stats_ddp4-mlp")));
        QVERIFY(page.selectTensor(QStringLiteral("3.weight"), QStringLiteral("model.pt")));
        PageTest::grab(page, QStringLiteral("tensors_stats"));
    }

    void cancelStopsStatistics()
    {
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QSignalSpy done(&page, &CheckpointTensorsPage::statsFinished);
        QVERIFY(loadAndWait(page, PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300"))));
        page.cancel();
        QVERIFY(done.count() == 1 || done.wait(10000));
        QVERIFY(!page.isComputingStats());
        QVERIFY(!page.summaryText().contains(QStringLiteral("computing")));
    }

    void newerCheckpointWins()
    {
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QSignalSpy loaded(&page, &CheckpointTensorsPage::tensorsLoaded);
        page.setCheckpoint(PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300")));
        page.setCheckpoint(PageTest::state(QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")));
        QVERIFY(loaded.wait(20000));
        QThreadPool::globalInstance()->waitForDone(); // the first load's job (QtConcurrent's pool) has ended ...
        UiTest::deliverPostedEvents();                // ... and its result has been delivered or dropped
        QCOMPARE(loaded.count(), 1);
        for (const TensorRow& row : page.model()->tensors())
            QCOMPARE(row.file, QStringLiteral("epoch=1-step=50.ckpt"));
        page.setCheckpoint(nullptr);
        QCOMPARE(page.model()->rowCount(), 0);
    }

    void shardMapOfRealDcpFolder()
    {
        const QString corpus = qEnvironmentVariableIsEmpty("CKPT_CORPUS") ? QStringLiteral(CKPT_CORPUS_DIR) : qEnvironmentVariable("CKPT_CORPUS");
        const QString dcp = corpus + QStringLiteral("/Lightning-AI__pytorch-lightning@0f916ea4/dcp-2rank");
        if (!QFileInfo::exists(dcp))
            QSKIP("the shared corpus is not next to the repository");
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QVERIFY(loadAndWait(page, std::make_shared<const ckpt::TrainingState>(ckpt::readTrainingState(dcp.toStdString()))));
        QVERIFY(page.model()->rowCount() > 0);
        int sharded = -1;
        for (int row = 0; row < page.model()->rowCount(); ++row) {
            if (page.model()->tensors()[static_cast<std::size_t>(row)].shards.size() > 1)
                sharded = row;
        }
        QVERIFY(sharded >= 0);
        const TensorRow& t = page.model()->tensors()[static_cast<std::size_t>(sharded)];
        QSignalSpy statsDone(&page, &CheckpointTensorsPage::statsFinished);
        QVERIFY(statsDone.wait(20000));
        QVERIFY(page.selectTensor(t.name));
        QVERIFY(!page.shardMap()->isHidden());
        // merged exactly over the chunks: a histogram of every element
        QVERIFY(t.stats && t.stats->problem.isEmpty());
        uint64_t binned = 0;
        for (const uint64_t c : t.stats->histCounts)
            binned += c;
        QCOMPARE(qint64(binned), t.numel);
        QCOMPARE(page.histogram()->barCount(), 64);
        QCOMPARE(page.shardMap()->barCount(), int(t.shards.size()));
        QVERIFY(cell(*page.model(), sharded, TensorListModel::File).contains(QStringLiteral("DCP chunks")));
        // Each chunk's own statistics are written beside its bar.
        QCOMPARE(t.stats->shardNotes.size(), qsizetype(t.shards.size()));
        QVERIFY(t.stats->shardNotes.front().startsWith(QStringLiteral("mean ")));
        PageTest::grab(page, QStringLiteral("tensors_dcp"));
    }

    // DeepSpeed ZeRO-2 (sample_runs/deepspeed): each rank's optimizer file holds its partition of
    // the flat fp32 master weights. One row merges them; its statistics are those of the two
    // partitions concatenated, as PyTorch computes them.
    void zeroPartitionsMergedAndPerRank()
    {
        const QString folder = PageTest::sampleRun(QStringLiteral("deepspeed/global_step40"));
        // torch.load with DeepSpeed's modules stood in for (the files name its classes; it is not installed).
        QTemporaryDir out;
        QVERIFY(out.isValid());
        const QString truthFile = out.filePath(QStringLiteral("truth.json"));
        const QString failed = UiTest::runPython(QStringLiteral(
            "import importlib.abc, importlib.machinery, json, sys, types, torch\n"
            "class Stand(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name.split('.')[0] == 'deepspeed':\n"
            "            return importlib.machinery.ModuleSpec(name, self, is_package=True)\n"
            "    def create_module(self, spec):\n"
            "        m = types.ModuleType(spec.name)\n"
            "        m.__path__ = []\n"
            "        def attr(a):\n"
            "            if a.startswith('__'):\n"
            "                raise AttributeError(a)\n"
            "            return type(a, (), {'__init__': lambda s, *x, **k: None, '__setstate__': lambda s, st: None})\n"
            "        m.__getattr__ = attr\n"
            "        return m\n"
            "    def exec_module(self, m):\n"
            "        pass\n"
            "sys.meta_path.insert(0, Stand())\n"
            "parts = [torch.load('%1/zero_pp_rank_%d_mp_rank_00_optim_states.pt' % r)\n"
            "         ['optimizer_state_dict']['single_partition_of_fp32_groups'][0].double() for r in (0, 1)]\n"
            "whole = torch.cat(parts)\n"
            "json.dump({'sizes': [p.numel() for p in parts], 'mean': whole.mean().item(), 'l2': whole.norm().item(),\n"
            "           'min': whole.min().item(), 'max': whole.max().item(), 'mean0': parts[0].mean().item()},\n"
            "          open(sys.argv[1], 'w'))\n").arg(folder), truthFile);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        const QJsonObject truth = UiTest::readJson(truthFile);
        QVERIFY(!truth.isEmpty());

        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QVERIFY(loadStatsAndWait(page, PageTest::state(QStringLiteral("deepspeed/global_step40"))));
        const std::vector<TensorRow>& rows = page.model()->tensors();
        const auto group = std::find_if(rows.begin(), rows.end(), [](const TensorRow& r) {
            return !r.members.empty() && r.name.endsWith(QStringLiteral("single_partition_of_fp32_groups/0"));
        });
        QVERIFY(group != rows.end());
        QVERIFY(!group->replicated);
        QCOMPARE(group->shardKind, QStringLiteral("ZeRO partitions"));
        QCOMPARE(group->members.size(), std::size_t(2));
        const QJsonArray sizes = truth[QStringLiteral("sizes")].toArray();
        QCOMPARE(group->shards[0].rank, 0);
        QCOMPARE(group->shards[1].rank, 1);
        QCOMPARE(group->shards[0].offsets, std::vector<int64_t>{0});
        QCOMPARE(group->shards[1].offsets, std::vector<int64_t>{sizes[0].toInteger()});
        QCOMPARE(group->numel, sizes[0].toInteger() + sizes[1].toInteger());
        QVERIFY(group->stats && group->stats->problem.isEmpty());
        QVERIFY(near(group->stats->mean, truth[QStringLiteral("mean")]));
        QVERIFY(near(group->stats->l2, truth[QStringLiteral("l2")]));
        QVERIFY(near(group->stats->min, truth[QStringLiteral("min")]));
        QVERIFY(near(group->stats->max, truth[QStringLiteral("max")]));
        // Per partition: rank 0's own statistics, and the per-rank rows point at the merged one.
        QCOMPARE(group->stats->shardStats.size(), std::size_t(2));
        QVERIFY(near(group->stats->shardStats[0].mean, truth[QStringLiteral("mean0")]));
        const int groupRow = static_cast<int>(group - rows.begin());
        for (const int m : group->members)
            QCOMPARE(rows[static_cast<std::size_t>(m)].group, groupRow);
        QVERIFY(cell(*page.model(), groupRow, TensorListModel::File).contains(QStringLiteral("[2 ZeRO partitions]")));
        // The merged histogram comes from the partitions' value sketches: every element binned,
        // and the plot says how many may be one bin off.
        uint64_t binned = 0;
        for (const uint64_t c : group->stats->histCounts)
            binned += c;
        QCOMPARE(qint64(binned), group->numel);
        QVERIFY(group->stats->histUncertain * 100 < binned);
        QVERIFY(page.selectTensor(group->name, group->file));
        QCOMPARE(page.histogram()->barCount(), 64);
        QCOMPARE(page.histogram()->title().contains(QStringLiteral("one bin off")), group->stats->histUncertain > 0);
        PageTest::grab(page, QStringLiteral("tensors_zero_merged"));

        // Selecting rank 1's own row shows the map of both partitions.
        const TensorRow& rank1 = rows[static_cast<std::size_t>(group->members[1])];
        QVERIFY(page.selectTensor(rank1.name, rank1.file));
        QVERIFY(!page.shardMap()->isHidden());
        QCOMPARE(page.shardMap()->barCount(), 2);
        PageTest::grab(page, QStringLiteral("tensors_zero_partitions"));
    }

    // Megatron-LM TP 2 x PP 2: each parameter's tensor-parallel shards (one per mp_rank file) get one row
    // under the global name, joined along the split dimension, with statistics over the whole
    // parameter; a replicated layernorm's copies are compared instead.
    void megatronShardsJoined()
    {
        const QString iter = QStringLiteral(CKPT_TESTDATA_DIR "/layout_runs/megatron-tp2-pp2/iter_0000020");
        QTemporaryDir out;
        QVERIFY(out.isValid());
        const QString truthFile = out.filePath(QStringLiteral("truth.json"));
        // Stage 1's layer 0 is global layer 2 (num_layers 4 over 2 stages).
        const QString failed = UiTest::runPython(QStringLiteral(
            "import json, sys, torch\n"
            "shards = [torch.load('%1/mp_rank_0%d_001/model_optim_rng.pt' % tp)['model']\n"
            "          ['decoder.layers.0.self_attention.linear_qkv.weight'].double() for tp in (0, 1)]\n"
            "whole = torch.cat(shards, 0)\n"
            "json.dump({'rows': [s.shape[0] for s in shards], 'cols': shards[0].shape[1], 'mean': whole.mean().item(),\n"
            "           'l2': whole.norm().item(), 'min': whole.min().item(), 'max': whole.max().item()}, open(sys.argv[1], 'w'))\n").arg(iter), truthFile);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        const QJsonObject truth = UiTest::readJson(truthFile);
        QVERIFY(!truth.isEmpty());

        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QVERIFY(loadStatsAndWait(page, std::make_shared<const ckpt::TrainingState>(ckpt::readTrainingState(iter.toStdString()))));
        const std::vector<TensorRow>& rows = page.model()->tensors();
        const auto named = [&](const QString& name) {
            return std::find_if(rows.begin(), rows.end(), [&](const TensorRow& r) { return !r.members.empty() && r.name == name; });
        };
        const auto qkv = named(QStringLiteral("decoder.layers.2.self_attention.linear_qkv.weight"));
        QVERIFY(qkv != rows.end());
        QCOMPARE(qkv->shardKind, QStringLiteral("tensor-parallel shards"));
        QVERIFY(!qkv->replicated);
        const QJsonArray shardRows = truth[QStringLiteral("rows")].toArray();
        QCOMPARE(qkv->shape, (std::vector<int64_t>{shardRows[0].toInteger() + shardRows[1].toInteger(), truth[QStringLiteral("cols")].toInteger()}));
        QCOMPARE(qkv->shards.size(), std::size_t(2));
        QCOMPARE(qkv->shards[1].offsets, (std::vector<int64_t>{shardRows[0].toInteger(), 0}));
        QVERIFY(qkv->stats && qkv->stats->problem.isEmpty());
        QVERIFY(near(qkv->stats->mean, truth[QStringLiteral("mean")]));
        QVERIFY(near(qkv->stats->l2, truth[QStringLiteral("l2")]));
        QVERIFY(near(qkv->stats->min, truth[QStringLiteral("min")]));
        QVERIFY(near(qkv->stats->max, truth[QStringLiteral("max")]));
        // A row-parallel weight splits its columns.
        const auto proj = named(QStringLiteral("decoder.layers.3.self_attention.linear_proj.weight"));
        QVERIFY(proj != rows.end());
        QCOMPARE(proj->shards[1].offsets[0], 0);
        QCOMPARE(proj->shards[1].offsets[1], proj->shards[0].sizes[1]);
        // A layernorm fused into linear_qkv is replicated over the TP ranks: its copies agree.
        const auto norm = named(QStringLiteral("decoder.layers.0.self_attention.linear_qkv.layer_norm_weight"));
        QVERIFY(norm != rows.end());
        QVERIFY(norm->replicated);
        QVERIFY(norm->stats && norm->stats->shardSummary.isEmpty());
        QCOMPARE(norm->stats->shardNotes.value(1), QStringLiteral("identical"));
        QVERIFY(page.selectTensor(qkv->name, qkv->file));
        QCOMPARE(page.shardMap()->barCount(), 2);
        PageTest::grab(page, QStringLiteral("tensors_megatron_tp"));
    }

    // DDP ranks that each saved the model: the copies are compared with rank 0's, bit for bit.
    void ddpReplicasCompared()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString made = UiTest::runPython(QStringLiteral(
            "import sys, torch\n"
            "torch.manual_seed(0)\n"
            "sd = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)).state_dict()\n"
            "for r in range(3):\n"
            "    s = {k: v.clone() for k, v in sd.items()}\n"
            "    if r == 2: s['1.weight'][1, 2] -= 0.25\n"
            "    torch.save(s, sys.argv[1] + '/model_rank%d.pt' % r)\n"), dir.path());
        QVERIFY2(made.isEmpty(), qPrintable(made));
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QVERIFY(loadStatsAndWait(page, std::make_shared<const ckpt::TrainingState>(ckpt::readTrainingState(dir.path().toStdString()))));
        int groups = 0;
        for (const TensorRow& row : page.model()->tensors()) {
            if (row.members.empty())
                continue;
            ++groups;
            QVERIFY(row.replicated);
            QCOMPARE(row.shardKind, QStringLiteral("replicas"));
            QCOMPARE(row.shards.size(), std::size_t(3));
            QVERIFY(row.stats);
            QCOMPARE(row.stats->shardNotes.size(), qsizetype(3));
            if (row.name == QStringLiteral("1.weight")) {
                QCOMPARE(row.stats->shardNotes[1], QStringLiteral("identical"));
                QVERIFY2(row.stats->shardNotes[2].startsWith(QStringLiteral("differs: 1 element(s), max |Δ| 0.25")),
                         qPrintable(row.stats->shardNotes[2]));
                QCOMPARE(row.stats->shardSummary, QStringLiteral("1 rank(s) hold a different copy"));
                QVERIFY(row.stats->problem.isEmpty()); // the statistics are rank 0's
                QVERIFY(page.selectTensor(row.name, row.file));
                QCOMPARE(page.shardMap()->barCount(), 3);
            } else {
                QVERIFY2(row.stats->problem.isEmpty() && row.stats->shardSummary.isEmpty(), qPrintable(row.name));
                QCOMPARE(row.stats->shardNotes[2], QStringLiteral("identical"));
            }
        }
        QCOMPARE(groups, 4); // 0.weight, 0.bias, 1.weight, 1.bias
        PageTest::grab(page, QStringLiteral("tensors_ddp_replicas"));
    }
};

CKPT_UI_TEST_MAIN(TestTensorsPage)
#include "tst_tensorspage.moc"
