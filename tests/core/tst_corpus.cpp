// SPDX-License-Identifier: MIT
// The 212 real files in ../shared/corpus that other people's programs wrote: every benign
// checkpoint opens (and lists as many storages as its index says), every file the index marks
// MALICIOUS is flagged by the imports report, the DCP, DeepSpeed and other/negative files each
// have their expected outcome, and nothing crashes. Skipped when the corpus is not present
// (corpus.status says so).
#include "test_support.h"

#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/imports_scan.h"
#include "ckpt/state/training_state.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace ckpt;
using namespace testsupport;

namespace {

struct Row {
    std::string file, category, format, notes;
};

std::vector<Row> readIndex(const std::string& dir)
{
    std::vector<Row> rows;
    std::ifstream in(dir + "/INDEX.tsv");
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string col;
        while (std::getline(ss, col, '\t'))
            cols.push_back(col);
        if (cols.size() >= 9)
            rows.push_back({cols[0], cols[1], cols[6], cols[8]});
    }
    return rows;
}

// "...; 7 storages; ..." in the index's format column.
int indexedStorages(const std::string& format)
{
    const auto at = format.find(" storages");
    if (at == std::string::npos)
        return -1;
    auto start = format.rfind(' ', at - 1);
    return std::stoi(format.substr(start + 1, at - start - 1));
}

} // namespace

class TestCorpus : public QObject {
    Q_OBJECT
private slots:
    void file_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("notes");
        const std::string dir = corpusDir();
        if (dir.empty())
            QSKIP("../shared/corpus is not present (set CKPT_CORPUS)");
        const auto rows = readIndex(dir);
        QVERIFY(rows.size() > 200);
        for (const auto& r : rows)
            QTest::newRow(r.file.c_str()) << QString::fromStdString(dir + "/" + r.file) << QString::fromStdString(r.category)
                                          << QString::fromStdString(r.format) << QString::fromStdString(r.notes);
    }

    void file()
    {
        QFETCH(QString, file);
        QFETCH(QString, category);
        QFETCH(QString, format);
        QFETCH(QString, notes);
        const std::string path = file.toStdString();
        std::string openError;
        std::unique_ptr<CheckpointFile> opened;
        try {
            opened = CheckpointFile::open(path);
        } catch (const OpenError& e) {
            openError = e.what();
            QVERIFY(openError.starts_with(path + ": "));
        }
        std::string scanError;
        ImportsReport report;
        try {
            report = scanImports(path);
        } catch (const OpenError& e) {
            scanError = e.what();
        }

        const bool checkpointCategory = category.startsWith(QLatin1String("1-")) || category.startsWith(QLatin1String("3-"))
                                     || category.startsWith(QLatin1String("7-"))
                                     || (category == QLatin1String("2-legacy torch.save"));
        if (checkpointCategory) {
            QVERIFY2(opened, openError.c_str());
            QVERIFY2(!report.anyDangerous() || notes.contains(QLatin1String("MALICIOUS")),
                     "a benign checkpoint must not be flagged dangerous");
            const int storages = indexedStorages(format.toStdString());
            if (storages >= 0 && opened->format() == FileFormat::TorchZip)
                QCOMPARE(static_cast<int>(opened->storages().size()), storages);
            for (const auto& e : opened->tensorEntries()) {
                const auto& t = opened->tensors()[e.tensor];
                if (t.layout == TensorLayout::Strided)
                    QVERIFY2(t.problem.empty(), (formatKeyPath(e.key) + ": " + t.problem).c_str());
            }
        }
        if (category.contains(QLatin1String("(tar)")))
            QVERIFY(QString::fromStdString(openError).contains(QLatin1String("0.1.x tar format")));
        if (notes.startsWith(QLatin1String("MALICIOUS")) || notes.startsWith(QLatin1String("\"MALICIOUS"))) {
            QVERIFY2(scanError.empty(), scanError.c_str());
            QVERIFY2(report.anyDangerous(), "a malicious file must be flagged");
        }
        if (notes.startsWith(QLatin1String("benign control")))
            QVERIFY(!report.anyDangerous());
        if (category.startsWith(QLatin1String("4-")))
            dcpFile(path, opened.get(), openError, report);
        else if (category.startsWith(QLatin1String("5-")))
            deepSpeedFile(path, opened.get(), openError);
        else if (category.startsWith(QLatin1String("8-")))
            otherFile(path, notes, opened.get(), openError, report);
    }

private:
    // A real DCP folder: .metadata is a plain pickle of the metadata classes (no tensors, nothing
    // dangerous); a .distcp is several torch.save archives end to end, read only through the byte
    // ranges .metadata gives (alone it is refused, naming the file); every chunk of every entry opens
    // and the folder is one checkpoint with its model.
    static void dcpFile(const std::string& path, const CheckpointFile* opened, const std::string& openError, const ImportsReport& report)
    {
        const std::string dir = std::filesystem::path(path).parent_path().string();
        if (path.ends_with(".metadata")) {
            QVERIFY2(opened, openError.c_str());
            QCOMPARE(opened->tensorEntries().size(), std::size_t(0));
            QVERIFY(!report.anyDangerous());
        } else {
            QVERIFY2(!opened && openError.starts_with(path + ": "), "a .distcp alone is not one archive");
        }
        const DcpCheckpoint d = readDcpCheckpoint(dir);
        QVERIFY(!d.entries.empty());
        std::size_t chunks = 0;
        for (const auto& e : d.entries) {
            QVERIFY2(e.problem.empty(), (e.fqn + ": " + e.problem).c_str());
            for (const auto& c : e.chunks) {
                if (e.isBytes || std::filesystem::path(dir + "/" + c.file) != std::filesystem::path(path))
                    continue;
                const auto chunk = d.openChunk(c);
                QVERIFY2(chunk && !chunk->tensorEntries().empty(), (e.fqn + " in " + c.file).c_str());
                ++chunks;
            }
        }
        if (path.ends_with(".distcp"))
            QVERIFY2(chunks > 0, "no entry of .metadata lies in this .distcp");
        const TrainingState s = readTrainingState(dir);
        QCOMPARE(s.layout.layout, Layout::Dcp);
        QVERIFY(s.model && !s.model->parameters.empty());
    }

    // A real DeepSpeed ZeRO save (ds_version 0.14.1): both .pt files open; `latest` is its tag file,
    // a text file refused as a checkpoint; the folder reads as DeepSpeed with the optimizer's ZeRO
    // partition placed on parameter names and the fp32 masters found.
    static void deepSpeedFile(const std::string& path, const CheckpointFile* opened, const std::string& openError)
    {
        if (path.ends_with("/latest")) {
            QVERIFY2(!opened && openError.find("a text file") != std::string::npos, openError.c_str());
            return;
        }
        QVERIFY2(opened && !opened->tensorEntries().empty(), openError.c_str());
        const TrainingState s = readTrainingState(std::filesystem::path(path).parent_path().string());
        QCOMPARE(s.layout.layout, Layout::DeepSpeed);
        QVERIFY(s.model && s.optimizer);
        QVERIFY2(s.optimizer->nameMapping.starts_with("by "), s.optimizer->nameMapping.c_str());
        QVERIFY(std::any_of(s.optimizer->paramState.begin(), s.optimizer->paramState.end(),
                            [](const ParamState& ps) { return ps.master.has_value() && !ps.name.empty(); }));
    }

    // Not PyTorch checkpoints: a NEGATIVE SAMPLE is refused with a reason naming the file; an OTHER
    // plain pickle opens with no tensors and nothing dangerous; an .npz is named as numpy's.
    static void otherFile(const std::string& path, const QString& notes, const CheckpointFile* opened, const std::string& openError,
                          const ImportsReport& report)
    {
        if (path.ends_with(".npz")) {
            QVERIFY2(!opened && openError.find("numpy .npz archive") != std::string::npos, openError.c_str());
            return;
        }
        if (notes.startsWith(QLatin1String("NEGATIVE")) || notes.startsWith(QLatin1String("\"NEGATIVE"))) {
            QVERIFY2(!opened && openError.starts_with(path + ": not a checkpoint"), openError.c_str());
            return;
        }
        QVERIFY2(opened, openError.c_str());
        QCOMPARE(opened->format(), FileFormat::Pickle);
        QCOMPARE(opened->tensorEntries().size(), std::size_t(0));
        QVERIFY(!report.anyDangerous());
    }
};

QTEST_GUILESS_MAIN(TestCorpus)
#include "tst_corpus.moc"
