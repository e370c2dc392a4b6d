// SPDX-License-Identifier: MIT
// The manifest audit on checkpoint layouts built here, apart from the generated run the other test
// breaks (tst_manifest_audit.cpp): sharded safetensors indexes and torch.distributed.checkpoint folders.
#include "test_support.h"

#include "ckpt/audit/manifest_audit.h"
#include "ckpt/io/sha256.h"
#include "manifest_audit_test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A safetensors file holding F32 tensors of the given element counts.
std::string safetensorsFile(const std::vector<std::pair<std::string, int>>& tensors)
{
    json header = json::object();
    uint64_t offset = 0;
    for (const auto& [name, n] : tensors) {
        header[name] = {{"dtype", "F32"}, {"shape", {n}}, {"data_offsets", {offset, offset + 4u * n}}};
        offset += 4u * n;
    }
    std::string h = header.dump();
    while (h.size() % 8)
        h += ' ';
    std::string out(8, '\0');
    uint64_t len = h.size();
    std::memcpy(out.data(), &len, 8);
    out += h;
    out += std::string(offset, '\x11');
    return out;
}

/// Writes manifest.json (sizes and SHA-256 of every other file) and COMPLETE into dir.
void commitCheckpoint(const std::string& dir, std::optional<int> worldSize)
{
    json files = json::object();
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file())
            continue;
        const std::string rel = e.path().lexically_relative(dir).generic_string();
        if (rel == "manifest.json" || rel == "COMPLETE")
            continue;
        const auto h = ckpt::sha256File(e.path().string());
        files[rel] = {{"bytes", h.bytes}, {"sha256", h.hex()}};
    }
    json manifest = {{"format_version", 3}, {"files", files}};
    if (worldSize)
        manifest["world_size"] = *worldSize;
    writeText(dir + "/manifest.json", manifest.dump(2));
    writeText(dir + "/COMPLETE", "");
}

} // namespace

class TestManifestAuditLayouts : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void safetensorsIndex()
    {
        const std::string base = m_tmp.path().toStdString() + "/st";
        auto build = [&](const std::string& name, const json& weightMap,
                         const std::vector<std::pair<std::string, int>>& shard1,
                         const std::vector<std::pair<std::string, int>>& shard2) {
            const std::string dir = base + "/" + name;
            fs::create_directories(dir);
            writeText(dir + "/model-00001-of-00002.safetensors", safetensorsFile(shard1));
            writeText(dir + "/model-00002-of-00002.safetensors", safetensorsFile(shard2));
            uint64_t totalSize = 0; // what transformers records: the bytes of every tensor of the set
            for (const auto& [tensor, n] : shard1)
                totalSize += 4u * n;
            for (const auto& [tensor, n] : shard2)
                totalSize += 4u * n;
            writeText(dir + "/model.safetensors.index.json",
                      json{{"metadata", {{"total_size", totalSize}}}, {"weight_map", weightMap}}.dump(2));
            commitCheckpoint(dir, std::nullopt);
            return dir;
        };
        const std::string s1 = "model-00001-of-00002.safetensors", s2 = "model-00002-of-00002.safetensors";
        const std::string clean = build("checkpoint-1", {{"a", s1}, {"b", s1}, {"c", s2}}, {{"a", 2}, {"b", 3}}, {{"c", 4}});
        auto r = ckpt::auditPath(clean);
        QVERIFY2(r.findings.empty(), describe(r).constData());
        QCOMPARE(r.filesChecked, std::size_t(3));

        // The index maps `d` to shard 2, which lacks it; shard 1 holds `e`, which the index does not map.
        const std::string broken = build("checkpoint-2", {{"a", s1}, {"b", s1}, {"c", s2}, {"d", s2}},
                                         {{"a", 2}, {"b", 3}, {"e", 1}}, {{"c", 4}});
        r = ckpt::auditPath(broken);
        QCOMPARE(rules(r), (QStringList{"integrity.safetensors-index", "integrity.safetensors-index"}));
        QCOMPARE(q(r.findings[0].file), q(broken + "/" + s1));
        QVERIFY(r.findings[0].message.find(": e") != std::string::npos);
        QCOMPARE(q(r.findings[1].file), q(broken + "/" + s2));
        QVERIFY(r.findings[1].message.find(": d") != std::string::npos);
        QCOMPARE(q(r.findings[1].evidence[0].where), QByteArray("checkpoint-2/model.safetensors.index.json: weight_map.d"));

        // metadata.total_size that disagrees with the shards: a tensor lost, or a shard from another save.
        const std::string badTotal = build("checkpoint-3", {{"a", s1}, {"b", s1}, {"c", s2}}, {{"a", 2}, {"b", 3}}, {{"c", 4}});
        json index = readJson(badTotal + "/model.safetensors.index.json");
        QCOMPARE(index["metadata"]["total_size"].get<int>(), 36);
        index["metadata"]["total_size"] = 40;
        writeText(badTotal + "/model.safetensors.index.json", index.dump(2));
        commitCheckpoint(badTotal, std::nullopt);
        r = ckpt::auditPath(badTotal);
        QCOMPARE(rules(r), QStringList{"integrity.safetensors-index"});
        QVERIFY(r.findings[0].message.find("total_size 40 but its shards hold 36 bytes") != std::string::npos);
        QCOMPARE(q(r.findings[0].evidence[0].where), QByteArray("checkpoint-3/model.safetensors.index.json: metadata.total_size"));

        // A shard the index names is gone (and listed in the manifest: a missing file too).
        fs::remove(broken + "/" + s2);
        r = ckpt::auditPath(broken);
        QCOMPARE(rules(r), (QStringList{"integrity.missing-file", "integrity.safetensors-index",
                                        "integrity.safetensors-index"}));
    }

    void dcpDirectories()
    {
        const std::string dir = m_tmp.path().toStdString() + "/dcp/checkpoint-0000010";
        fs::create_directories(dir + "/model");
        writeText(dir + "/model/.metadata", "not a pickle");
        writeText(dir + "/model/__0_0.distcp", "chunk 0");
        writeText(dir + "/model/__1_0.distcp", "chunk 1");
        commitCheckpoint(dir, std::nullopt);
        auto r = ckpt::auditPath(dir);
        QCOMPARE(rules(r), QStringList{"integrity.dcp-coverage"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Warning);
        QVERIFY(r.findings[0].message.find("DCP coverage not checked") != std::string::npos);
        QCOMPARE(q(r.findings[0].file), q(dir + "/model/.metadata"));

        // Data files without .metadata: the DCP save never committed.
        fs::remove(dir + "/model/.metadata");
        commitCheckpoint(dir, std::nullopt);
        r = ckpt::auditPath(dir);
        QCOMPARE(rules(r), QStringList{"integrity.dcp-coverage"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
        QCOMPARE(q(r.findings[0].file), q(dir + "/model/.metadata"));
    }

    void dcpCoverageOnRealFolder()
    {
        const std::string corpus = corpusDir();
        const std::string source = corpus + "/Lightning-AI__pytorch-lightning@0f916ea4/dcp-2rank";
        if (corpus.empty() || !fs::exists(source + "/.metadata"))
            QSKIP("../shared/corpus (a real 2-rank DCP folder written by torch 2.0) is not present");
        // As found: .metadata is its own commit marker; no manifest, so only an info.
        auto r = ckpt::auditPath(source);
        QCOMPARE(rules(r), QStringList{"integrity.no-manifest"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Info);

        // Inside a committed checkpoint directory: every chunk is where .metadata says.
        const std::string dir = m_tmp.path().toStdString() + "/dcp-real/checkpoint-0000020";
        fs::create_directories(dir);
        fs::copy(source, dir + "/model", fs::copy_options::recursive);
        for (const auto& e : fs::recursive_directory_iterator(dir))
            fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
        commitCheckpoint(dir, std::nullopt);
        r = ckpt::auditPath(dir);
        QVERIFY2(r.findings.empty(), describe(r).constData());

        // rank 1's file cut short (and the manifest rewritten to match, so only coverage fails).
        fs::resize_file(dir + "/model/__1_0.distcp", fs::file_size(dir + "/model/__1_0.distcp") / 2);
        commitCheckpoint(dir, std::nullopt);
        r = ckpt::auditPath(dir);
        QCOMPARE(rules(r), QStringList{"integrity.dcp-coverage"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
        QVERIFY2(r.findings[0].message.find("beyond the end") != std::string::npos, r.findings[0].message.c_str());
        QVERIFY(r.findings[0].message.find("__1_0.distcp") != std::string::npos);
        QVERIFY(r.findings[0].evidence[0].where.starts_with("checkpoint-0000020/model/.metadata: storage_data."));

        // rank 0's file gone, and a stray file from another save.
        fs::remove(dir + "/model/__0_0.distcp");
        writeText(dir + "/model/__7_0.distcp", "stray");
        commitCheckpoint(dir, std::nullopt);
        r = ckpt::auditPath(dir);
        QCOMPARE(rules(r), (QStringList{"integrity.dcp-coverage", "integrity.dcp-coverage", "integrity.dcp-coverage"}));
        QCOMPARE(q(r.findings[0].file), q(dir + "/model/__0_0.distcp"));
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
        QCOMPARE(r.findings[1].severity, ckpt::Severity::Error);
        QCOMPARE(q(r.findings[2].file), q(dir + "/model/__7_0.distcp"));
        QCOMPARE(r.findings[2].severity, ckpt::Severity::Warning);
    }
};

QTEST_GUILESS_MAIN(TestManifestAuditLayouts)
#include "tst_manifest_audit_layouts.moc"
