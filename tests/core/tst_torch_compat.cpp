// SPDX-License-Identifier: MIT
// Reads every checkpoint made by tests/fixtures/make_checkpoints.py (Debian's PyTorch) and
// compares, key by key, with what torch.load saw: tensors (dtype, shape, stride, offset,
// flags and a CRC of the values), special tensors, numpy arrays, scalar values and objects.
#include "test_support.h"

#include "ckpt/report/json_export.h"

#include <QCoreApplication>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <map>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

#define JSON_EQ(actual, expected)                                                                              \
    do {                                                                                                       \
        const json a_ = (actual);                                                                              \
        const json e_ = (expected);                                                                            \
        QVERIFY2(a_ == e_, (a_.dump() + " != expected " + e_.dump()).c_str());                                 \
    } while (false)

namespace {

struct Found {
    std::map<std::string, NodeId> nodes;       // first node at each key path
};

Found indexByPath(const CheckpointFile& file)
{
    Found f;
    walkObject(file.graph(), file.root(), [&](const WalkVisit& v) { f.nodes.emplace(keyString(v.path), v.node); });
    return f;
}

std::string hexOf(const std::string& s)
{
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

bool sameFloat(const json& expected, double actual)
{
    if (expected.is_string()) {
        const std::string s = expected.get<std::string>();
        if (s == "nan")
            return std::isnan(actual);
        return std::isinf(actual) && ((s == "inf") == (actual > 0));
    }
    return expected.get<double>() == actual;
}

// Empty string when the node matches the expected value; otherwise what differs.
std::string compareValue(const ValueGraph& g, NodeId id, const json& e)
{
    const Node& n = g[id];
    const std::string type = e["type"];
    const json& v = e["value"];
    auto mismatch = [&](const std::string& what) { return type + " expected " + v.dump() + ", got " + kindName(n.kind) + " " + what; };
    if (type == "int")
        return n.kind == Kind::Int && n.i == v.get<int64_t>() ? "" : mismatch(std::to_string(n.i));
    if (type == "bigint")
        return n.kind == Kind::BigInt && n.text == v.get<std::string>() ? "" : mismatch(n.text);
    if (type == "float")
        return n.kind == Kind::Float && sameFloat(v, n.f) ? "" : mismatch(std::to_string(n.f));
    if (type == "str")
        return n.kind == Kind::String && n.text == v.get<std::string>() ? "" : mismatch(n.text);
    if (type == "bool")
        return n.kind == Kind::Bool && n.flag == v.get<bool>() ? "" : mismatch(n.flag ? "True" : "False");
    if (type == "none")
        return n.kind == Kind::None ? "" : mismatch("");
    if (type == "bytes")
        return n.kind == Kind::Bytes && hexOf(n.text) == v.get<std::string>() ? "" : mismatch(hexOf(n.text));
    if (type == "complex")
        return n.kind == Kind::Complex && sameFloat(v[0], n.f) && sameFloat(v[1], n.f2) ? "" : mismatch("");
    if (type == "dtype" || type == "device")
        return (n.kind == Kind::Dtype || n.kind == Kind::Device) && n.text == v.get<std::string>() ? "" : mismatch(n.text);
    if (type == "size") {
        std::vector<int64_t> dims;
        for (NodeId d : n.items)
            dims.push_back(g[d].i);
        return n.kind == Kind::Size && json(dims) == v ? "" : mismatch(json(dims).dump());
    }
    return "unknown expected type " + type;
}

std::string classOf(const ValueGraph& g, NodeId id)
{
    const Node& n = g[id];
    return n.text;
}

} // namespace

class TestTorchCompat : public QObject {
    Q_OBJECT
private slots:
    void compare_data()
    {
        QTest::addColumn<QString>("name");
        const json index = readJson(checkpointsDir() + "/index.json");
        QVERIFY(index.size() >= 30);
        for (const auto& name : index)
            QTest::newRow(name.get<std::string>().c_str()) << QString::fromStdString(name.get<std::string>());
    }

    void compare()
    {
        QFETCH(QString, name);
        const std::string path = checkpointsDir() + "/" + name.toStdString();
        const json expected = readJson(path + ".expected.json");
        std::unique_ptr<CheckpointFile> file;
        try {
            file = CheckpointFile::open(path);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QCOMPARE(q(formatName(file->format())), q(expected["format"].get<std::string>()));
        if (expected["zip_prefix"].is_string())
            QCOMPARE(q(file->property("archive_prefix").value_or("")), q(expected["zip_prefix"].get<std::string>()));

        // Dense tensors: every expected one is found with the same layout and values, and
        // no unexpected one is listed.
        std::map<std::string, const TensorEntry*> ours;
        std::size_t oursDense = 0;
        for (const auto& e : file->tensorEntries()) {
            ours.emplace(keyString(e.key), &e);
            oursDense += file->tensors()[e.tensor].layout == TensorLayout::Strided;
        }
        for (const auto& et : expected["tensors"]) {
            const std::string key = keyString(et["key"]);
            const auto it = ours.find(key);
            QVERIFY2(it != ours.end(), ("tensor " + key + " not found").c_str());
            const TensorInfo& t = file->tensors()[it->second->tensor];
            const std::string where = name.toStdString() + " " + key;
            QVERIFY2(t.problem.empty(), (where + ": " + t.problem).c_str());
            QCOMPARE(q(t.dtypeName), q(et["dtype"].get<std::string>()));
            JSON_EQ(t.shape, et["shape"]);
            JSON_EQ(t.stride, et["stride"]);
            QCOMPARE(t.storageOffset, et["storage_offset"].get<int64_t>());
            QCOMPARE(t.requiresGrad, et["requires_grad"].get<bool>());
            QCOMPARE(t.isParameter, et["is_parameter"].get<bool>());
            const auto bytes = contiguousBytes(*file, t);
            QVERIFY2(crc32Of(bytes) == et["crc32"].get<uint32_t>(), (where + ": values differ (CRC)").c_str());
        }
        QCOMPARE(oursDense, expected["tensors"].size());

        for (const auto& es : expected["special_tensors"]) {
            const std::string key = keyString(es["key"]);
            const auto it = ours.find(key);
            QVERIFY2(it != ours.end(), ("special tensor " + key + " not found").c_str());
            const TensorInfo& t = file->tensors()[it->second->tensor];
            QCOMPARE(q(layoutName(t.layout)), q(es["kind"].get<std::string>()));
            QCOMPARE(q(t.dtypeName), q(es["dtype"].get<std::string>()));
            JSON_EQ(t.shape, es["shape"]);
        }

        const Found found = indexByPath(*file);
        for (const auto& ea : expected["arrays"]) {
            const std::string key = keyString(ea["key"]);
            const auto it = found.nodes.find(key);
            QVERIFY2(it != found.nodes.end(), ("array " + key + " not found").c_str());
            const Node& n = file->graph()[it->second];
            QCOMPARE(n.kind, Kind::NdArray);
            const NdArrayInfo& a = file->document().arrays[n.ref];
            QVERIFY2(a.problem.empty(), a.problem.c_str());
            QCOMPARE(q(a.dtype), q(ea["dtype"].get<std::string>()));
            JSON_EQ(a.shape, ea["shape"]);
            QVERIFY2(crc32Of(contiguousArrayBytes(file->graph(), a)) == ea["crc32"].get<uint32_t>(),
                     ("array " + key + ": values differ (CRC)").c_str());
        }
        for (const auto& ev : expected["values"]) {
            const std::string key = keyString(ev["key"]);
            const auto it = found.nodes.find(key);
            QVERIFY2(it != found.nodes.end(), ("value " + key + " not found").c_str());
            const std::string diff = compareValue(file->graph(), it->second, ev);
            QVERIFY2(diff.empty(), (key + ": " + diff).c_str());
        }
        for (const auto& eo : expected["objects"]) {
            const std::string key = keyString(eo["key"]);
            const auto it = found.nodes.find(key);
            QVERIFY2(it != found.nodes.end(), ("object " + key + " not found").c_str());
            QCOMPARE(q(classOf(file->graph(), it->second)), q(eo["class"].get<std::string>()));
        }
    }
};

// Not a torch.load comparison: what a sharded safetensors set looks like when a shard is
// missing or the index disagrees with the shards.
class TestShardedSets : public QObject {
    Q_OBJECT
private slots:
    void missingShardStillOpensTheRest()
    {
        const std::string dir = std::string(CKPT_TESTDATA_DIR) + "/sharded-missing";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        std::filesystem::copy_file(checkpointsDir() + "/sharded.safetensors.index.json", dir + "/sharded.safetensors.index.json");
        std::filesystem::copy_file(checkpointsDir() + "/sharded-00001-of-00002.safetensors", dir + "/sharded-00001-of-00002.safetensors");
        auto file = CheckpointFile::open(dir + "/sharded.safetensors.index.json");
        QCOMPARE(file->format(), FileFormat::SafetensorsIndex);
        QCOMPARE(file->tensorEntries().size(), std::size_t(3)); // embed.weight, steps, empty
        const std::string warnings = nlohmann::json(file->warnings()).dump();
        QVERIFY2(warnings.find("sharded-00002-of-00002.safetensors cannot be read") != std::string::npos, warnings.c_str());
        QVERIFY2(warnings.find("tensor fc.weight") != std::string::npos, warnings.c_str());
        std::filesystem::remove_all(dir);
    }
};

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    TestTorchCompat compat;
    TestShardedSets sets;
    return QTest::qExec(&compat, argc, argv) | QTest::qExec(&sets, argc, argv);
}
#include "tst_torch_compat.moc"
