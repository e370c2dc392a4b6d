// SPDX-License-Identifier: MIT
// The safetensors readers beyond hand-built files (tst_safetensors.cpp builds one per validation rule):
// every real file of the corpus, and the sharded-checkpoint index (model.safetensors.index.json).
#include "ckpt/formats/safetensors_format.h"

#include "safetensors_test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

#include <string_view>

#ifndef CKPT_DEFAULT_CORPUS_DIR
#define CKPT_DEFAULT_CORPUS_DIR ""
#endif

using namespace testsupport;

namespace {

QString indexErrorOf(const QByteArray& json)
{
    try {
        ckpt::parseSafetensorsIndex(std::string_view(json.constData(), static_cast<std::size_t>(json.size())));
    } catch (const ckpt::FormatError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

QString corpusDir()
{
    const QString fromEnv = qEnvironmentVariable("CKPT_CORPUS_DIR");
    return fromEnv.isEmpty() ? QStringLiteral(CKPT_DEFAULT_CORPUS_DIR) : fromEnv;
}

} // namespace

class TestSafetensorsIndex : public QObject {
    Q_OBJECT

private slots:
    void corpus_data();
    void corpus();
    void index();
    void invalidIndex_data();
    void invalidIndex();
    void readersAgree_data();
    void readersAgree();
};

void TestSafetensorsIndex::corpus_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("expectValid");
    QTest::addColumn<int>("indexTensors"); // tensor count INDEX.tsv states, -1 if unknown

    const QString root = corpusDir();
    if (root.isEmpty() || !QDir(root).exists())
        QSKIP(qPrintable(QStringLiteral("no corpus at '%1' (set CKPT_CORPUS)").arg(root)));

    // INDEX.tsv: file, category, bytes, source_repo, path_in_repo, commit, format, torch_version, notes.
    struct Row {
        QString category, format, notes;
    };
    QHash<QString, Row> index;
    QFile tsv(QDir(root).filePath(QStringLiteral("INDEX.tsv")));
    if (tsv.open(QIODevice::ReadOnly)) {
        const QList<QByteArray> lines = tsv.readAll().split('\n');
        for (const QByteArray& line : lines) {
            const QList<QByteArray> cols = line.split('\t');
            if (cols.size() >= 9)
                index.insert(QString::fromUtf8(cols[0]), Row{QString::fromUtf8(cols[1]), QString::fromUtf8(cols[6]),
                                                             QString::fromUtf8(cols[8])});
        }
    }

    const QDir dir(root);
    QStringList files;
    QDirIterator it(root, {QStringLiteral("*.safetensors")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        files << dir.relativeFilePath(it.next());
    files.sort();
    if (files.isEmpty())
        QSKIP("the corpus holds no .safetensors files");

    static const QRegularExpression tensorCount(QStringLiteral("(\\d+) tensors"));
    for (const QString& rel : files) {
        const Row row = index.value(rel);
        const bool broken = row.category.contains(QLatin1String("negative"), Qt::CaseInsensitive)
            || row.category.contains(QLatin1String("malicious"), Qt::CaseInsensitive)
            || row.notes.contains(QLatin1String("NEGATIVE")) || row.notes.contains(QLatin1String("BROKEN"));
        const auto match = tensorCount.match(row.format);
        QTest::newRow(qPrintable(rel)) << dir.filePath(rel) << !broken
                                       << (match.hasMatch() ? match.captured(1).toInt() : -1);
    }
}

void TestSafetensorsIndex::corpus()
{
    QFETCH(QString, path);
    QFETCH(bool, expectValid);
    QFETCH(int, indexTensors);

    QFile f(path);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.errorString()));
    const QByteArray file = f.readAll();
    const QString disagreement = headerReadersDisagree(file);
    QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
    if (!expectValid) {
        QVERIFY2(!errorOf(file).isNull(), "a file INDEX.tsv marks as broken parsed");
        return;
    }
    ckpt::SafetensorsHeader header;
    try {
        header = parse(file);
    } catch (const ckpt::FormatError& e) {
        QFAIL(e.what());
    }
    QVERIFY(!header.tensors.empty());
    if (indexTensors >= 0)
        QCOMPARE(static_cast<int>(header.tensors.size()), indexTensors);
    QString why;
    QVERIFY2(tilesData(header, static_cast<quint64>(file.size()), &why), qPrintable(why));
    QSet<QString> names;
    for (const auto& t : header.tensors) {
        QVERIFY(!names.contains(QString::fromStdString(t.name)));
        names.insert(QString::fromStdString(t.name));
        QVERIFY(t.end <= static_cast<quint64>(file.size()));
    }
}

void TestSafetensorsIndex::index()
{
    const QByteArray json = R"({
  "metadata": {"total_size": 123456, "format": "pt", "ratio": 1.5, "flag": true, "none": null,
               "nested": {"a": [1, "x", {}], "b": []}},
  "weight_map": {
    "b.weight": "model-00002-of-00002.safetensors",
    "a.weight": "model-00001-of-00002.safetensors",
    "c": "sub/model-00001-of-00002.safetensors"
  },
  "extra": [{"deep": [1, 2]}], "other": 3
})";
    QVERIFY(indexReadersDisagree(json).isNull());
    const ckpt::SafetensorsIndex idx
        = ckpt::parseSafetensorsIndex(std::string_view(json.constData(), static_cast<std::size_t>(json.size())));
    QCOMPARE(idx.weightMap.size(), std::size_t(3));
    QCOMPARE(idx.weightMap[0], (std::pair<std::string, std::string>{"b.weight", "model-00002-of-00002.safetensors"}));
    QCOMPARE(idx.weightMap[1], (std::pair<std::string, std::string>{"a.weight", "model-00001-of-00002.safetensors"}));
    QCOMPARE(idx.weightMap[2].second, std::string("sub/model-00001-of-00002.safetensors"));

    const std::vector<std::pair<std::string, std::string>> expected{
        {"total_size", "123456"}, {"format", "pt"}, {"ratio", "1.5"},
        {"flag", "true"},         {"none", "null"}, {"nested", R"({"a":[1,"x",{}],"b":[]})"}};
    QCOMPARE(idx.metadata, expected);

    // metadata is optional; so is anything but weight_map.
    const auto minimal = ckpt::parseSafetensorsIndex(R"({"weight_map":{}})");
    QVERIFY(minimal.weightMap.empty());
    QVERIFY(minimal.metadata.empty());
    const auto nullMeta = ckpt::parseSafetensorsIndex(R"({"metadata":null,"weight_map":{"x":"a.safetensors"}})");
    QCOMPARE(nullMeta.weightMap.size(), std::size_t(1));
}

void TestSafetensorsIndex::invalidIndex_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("phrase");

    QTest::newRow("empty") << QByteArray() << "not valid JSON";
    QTest::newRow("syntax") << QByteArray(R"({"weight_map":{)") << "not valid JSON";
    QTest::newRow("invalid UTF-8") << QByteArray("{\"weight_map\":{\"a\xff\":\"x\"}}") << "not valid UTF-8";
    QTest::newRow("NUL after the object") << QByteArray("{\"weight_map\":{}}\0]", 19) << "NUL byte at offset 17";
    QTest::newRow("array") << QByteArray("[]") << "not a JSON object";
    QTest::newRow("no weight_map") << QByteArray(R"({"metadata":{}})") << "has no weight_map";
    QTest::newRow("weight_map array") << QByteArray(R"({"weight_map":[]})") << "weight_map must be an object";
    QTest::newRow("weight_map string") << QByteArray(R"({"weight_map":"x"})") << "weight_map must be an object";
    QTest::newRow("shard number") << QByteArray(R"({"weight_map":{"a":1}})")
                                  << "weight_map entry 'a' must be the name of a shard file (found a number)";
    QTest::newRow("shard object") << QByteArray(R"({"weight_map":{"a":{}}})") << "must be the name of a shard file";
    QTest::newRow("duplicate tensor") << QByteArray(R"({"weight_map":{"a":"x","a":"y"}})") << "weight_map lists 'a' twice";
    // the key repeated first in file order is named, whatever the order of the names
    QTest::newRow("first repeat named") << QByteArray(R"({"weight_map":{"b":"x","a":"x","b":"y","a":"y"}})")
                                        << "weight_map lists 'b' twice";
    QTest::newRow("duplicate weight_map") << QByteArray(R"({"weight_map":{},"weight_map":{}})")
                                          << "lists 'weight_map' twice";
    QTest::newRow("duplicate metadata key") << QByteArray(R"({"metadata":{"k":1,"k":2},"weight_map":{}})")
                                            << "metadata lists 'k' twice";
    QTest::newRow("parent directory") << QByteArray(R"({"weight_map":{"a":"../secret.safetensors"}})")
                                      << "not a relative file name inside the checkpoint folder";
    QTest::newRow("nested parent directory") << QByteArray(R"({"weight_map":{"a":"x/../../y"}})")
                                             << "not a relative file name";
    QTest::newRow("absolute path") << QByteArray(R"({"weight_map":{"a":"/etc/passwd"}})") << "not a relative file name";
    QTest::newRow("windows drive") << QByteArray(R"({"weight_map":{"a":"C:\\x.safetensors"}})")
                                   << "not a relative file name";
    QTest::newRow("backslash parent") << QByteArray(R"({"weight_map":{"a":"..\\x"}})") << "not a relative file name";
    QTest::newRow("empty shard") << QByteArray(R"({"weight_map":{"a":""}})") << "not a relative file name";
    QTest::newRow("metadata string") << QByteArray(R"({"metadata":"x","weight_map":{}})")
                                     << "metadata must be an object (found a string)";
    QTest::newRow("metadata too deep")
        << QByteArray(R"({"metadata":{"k":)" + QByteArray(100, '[') + QByteArray(100, ']') + "},\"weight_map\":{}}")
        << "nests deeper than 64 levels";
    QTest::newRow("unknown key too deep") << QByteArray(R"({"x":)" + QByteArray(100000, '[')) << "nests deeper";
}

void TestSafetensorsIndex::invalidIndex()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, phrase);
    const QString disagreement = indexReadersDisagree(json);
    QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
    const QString message = indexErrorOf(json);
    QVERIFY2(!message.isNull(), "the index parsed but should have been rejected");
    QVERIFY2(message.contains(phrase), qPrintable(QStringLiteral("message: ") + message));
}

void TestSafetensorsIndex::readersAgree_data()
{
    // Index texts where simdjson and nlohmann could part (the fast reader hands what it is unsure of to
    // the strict one), and the index files of the corpus and of the sample model folders.
    QTest::addColumn<QByteArray>("json");
    const QByteArray map = R"("weight_map":{"a":"m-1.safetensors","b":"m-2.safetensors"})";
    QTest::newRow("as written by save_pretrained")
        << "{\n  \"metadata\": {\n    \"total_size\": 123\n  },\n  " + map + "\n}\n";
    QTest::newRow("metadata scalars")
        << R"({"metadata":{"s":"x","u":18446744073709551615,"i":-5,"z":-0,"t":true,"f":false,"n":null},)" + map + "}";
    QTest::newRow("metadata float") << R"({"metadata":{"r":1.50},)" + map + "}";
    QTest::newRow("metadata exponent") << R"({"metadata":{"r":1e3},)" + map + "}";
    QTest::newRow("metadata nested") << R"({"metadata":{"k":{"a":[1, 2]}},)" + map + "}";
    QTest::newRow("metadata null") << R"({"metadata":null,)" + map + "}";
    QTest::newRow("metadata after the map") << "{" + map + R"(,"metadata":{"k":1}})";
    QTest::newRow("unknown scalar key") << R"({"x":1,"y":"z",)" + map + "}";
    QTest::newRow("unknown container key") << R"({"x":[{"a":1}],)" + map + "}";
    QTest::newRow("escaped names") << QByteArray(R"({"weight_map":{"a\u00e9":"m\u002d1.safetensors"}})");
    QTest::newRow("escaped parent") << QByteArray(R"({"weight_map":{"a":"\u002e./x"}})");
    QTest::newRow("escaped NUL shard") << QByteArray(R"({"weight_map":{"a":"x\u0000"}})");
    QTest::newRow("tensor twice, then bad metadata")
        << QByteArray(R"({"weight_map":{"a":"x","a":"y"},"metadata":{"k":1,"k":2}})");
    QTest::newRow("bad metadata, then tensor twice")
        << QByteArray(R"({"metadata":{"k":1,"k":2},"weight_map":{"a":"x","a":"y"}})");
    QTest::newRow("weight_map null") << QByteArray(R"({"weight_map":null})");
    QTest::newRow("big integer") << R"({"metadata":{"k":123456789012345678901234567890},)" + map + "}";

    const QString root = corpusDir();
    if (root.isEmpty() || !QDir(root).exists()) {
        qWarning("readersAgree: no corpus at '%s' (set CKPT_CORPUS): its index files are skipped", qPrintable(root));
        return;
    }
    QDirIterator it(root, {QStringLiteral("*.index.json")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.errorString()));
        QTest::newRow(qPrintable(QDir(root).relativeFilePath(f.fileName()))) << f.readAll();
    }
}

void TestSafetensorsIndex::readersAgree()
{
    QFETCH(QByteArray, json);
    const QString disagreement = indexReadersDisagree(json);
    QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
}

QTEST_GUILESS_MAIN(TestSafetensorsIndex)
#include "tst_safetensors_index.moc"
