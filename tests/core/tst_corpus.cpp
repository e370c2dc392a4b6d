// SPDX-License-Identifier: MIT
// The 212 real files in ../shared/corpus that other people's programs wrote: every benign
// checkpoint opens (and lists as many storages as its index says), every file the index marks
// MALICIOUS is flagged by the imports report, and nothing crashes. Skipped when the corpus is
// not present.
#include "test_support.h"

#include <QTest>

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
    }
};

QTEST_GUILESS_MAIN(TestCorpus)
#include "tst_corpus.moc"
