// SPDX-License-Identifier: MIT
// `ckpt tensors --json` writes each tensor straight into text (appendTensorEntryJson); its bytes
// must be those the nlohmann object of the same entry dumps to (tensorEntryToJson), for every
// tensor of the test checkpoints (quantized, sparse, subclassed, hostile names), the sample runs,
// the layout, model-folder and NeMo runs, the statistics fixtures (every dtype) and the shared corpus.
#include "test_support.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/report/json_export.h"
#include "ckpt/report/stats_json.h"
#include "ckpt/stats/checkpoint_stats.h"

#include <QTest>

#include <filesystem>

using namespace ckpt;
using namespace testsupport;

/// The file opened, or null when it is no checkpoint file (the readers' tests cover the refusal).
std::unique_ptr<CheckpointFile> openOrNull(const std::string& path)
{
    try {
        return CheckpointFile::open(path);
    } catch (const std::exception&) {
        return nullptr;
    }
}

class TestJsonExport : public QObject {
    Q_OBJECT

    /// Every regular file under `root`; the count of tensor entries compared goes to `compared`.
    void compareUnder(const std::string& root, std::size_t& compared, std::size_t& files)
    {
        namespace fs = std::filesystem;
        for (const auto& item : fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied)) {
            if (!item.is_regular_file() || item.file_size() > (std::uintmax_t(512) << 20))
                continue;
            const auto file = openOrNull(item.path().string());
            if (!file)
                continue;
            ++files;
            for (const TensorEntry& entry : file->tensorEntries()) {
                std::string direct;
                appendTensorEntryJson(direct, *file, entry);
                const std::string dumped = dumpJson(tensorEntryToJson(*file, entry));
                if (direct != dumped)
                    QFAIL(qPrintable(QString::fromStdString(item.path().string() + ":\n  direct " + direct + "\n  dumped " + dumped)));
                ++compared;
            }
        }
    }

    /// With statistics: every file under `root`, its figures computed, each entry written both ways.
    void compareStatsUnder(const std::string& root, std::size_t& compared)
    {
        namespace fs = std::filesystem;
        for (const auto& item : fs::recursive_directory_iterator(root)) {
            if (!item.is_regular_file() || item.file_size() > (std::uintmax_t(64) << 20))
                continue;
            const auto file = openOrNull(item.path().string());
            if (!file)
                continue;
            const FileStats stats = computeFileStats(*file);
            for (std::size_t i = 0; i < stats.tensors.size(); ++i) {
                const TensorEntry& entry = file->tensorEntries()[i];
                std::string direct;
                appendTensorEntryJson(direct, *file, entry, &stats.tensors[i].stats);
                nlohmann::json object = tensorEntryToJson(*file, entry);
                object["stats"] = tensorStatsToJson(stats.tensors[i].stats);
                const std::string dumped = dumpJson(object);
                if (direct != dumped)
                    QFAIL(qPrintable(QString::fromStdString(item.path().string() + ":\n  direct " + direct + "\n  dumped " + dumped)));
                ++compared;
            }
        }
    }

private slots:
    void sameBytesAsTheObject()
    {
        std::size_t compared = 0, files = 0;
        const std::string data = CKPT_TESTDATA_DIR;
        for (const std::string& root : {checkpointsDir(), hostileDir(), std::string(CKPT_SOURCE_DIR) + "/sample_runs",
                                        data + "/layout_runs", data + "/model_folders", data + "/nemo_runs", data + "/stats"})
            compareUnder(root, compared, files);
        const std::size_t ours = compared;
        QVERIFY2(ours > 1000, qPrintable(QStringLiteral("only %1 entries in the test data").arg(ours)));
        const std::string corpus = corpusDir();
        if (corpus.empty() || !std::filesystem::exists(corpus))
            qWarning("sameBytesAsTheObject: no corpus (set CKPT_CORPUS_DIR): only the test data was compared");
        else
            compareUnder(corpus, compared, files);
        qInfo("%zu tensor entries in %zu files written alike (%zu from the corpus)", compared, files, compared - ours);
    }

    void withStatsSameBytesAsTheObject()
    {
        // every dtype (NaN, infinities, complex magnitudes, unsupported types' problems), the test
        // checkpoints and a sample run
        std::size_t compared = 0;
        const std::string data = CKPT_TESTDATA_DIR;
        for (const std::string& root : {data + "/stats", checkpointsDir(), std::string(CKPT_SOURCE_DIR) + "/sample_runs/tiny-mlp"})
            compareStatsUnder(root, compared);
        QVERIFY2(compared > 200, qPrintable(QStringLiteral("only %1 entries").arg(compared)));
        qInfo("%zu entries with statistics written alike", compared);
    }
};

QTEST_GUILESS_MAIN(TestJsonExport)
#include "tst_json_export.moc"
