// SPDX-License-Identifier: MIT
// The manifest audit on real runs: sample_runs/make_sample_runs.py writes tiny-mlp/ with Debian's
// PyTorch (manifests hashed by Python's hashlib), then copies are broken in C++ one way each and
// the audit must name exactly the rule and the file. Also: SHA-256 vectors, cancellation, the
// read-only guarantee and the `ckpt audit` exit codes. Layouts built without the run (safetensors
// indexes, DCP folders) are tst_manifest_audit_layouts.cpp's.
#include "test_support.h"

#include "ckpt/audit/manifest_audit.h"
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/sha256.h"
#include "manifest_audit_test_support.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <map>
#include <random>
#include <sys/stat.h>

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void flipByte(const std::string& path, std::size_t offset)
{
    auto bytes = readFile(path);
    QVERIFY(offset < bytes.size());
    bytes[offset] ^= std::byte{0xff};
    writeFile(path, bytes);
}

struct FileState {
    int64_t mtimeNs = 0, atimeNs = 0;
    uint64_t size = 0;
    std::string sha;
    bool operator==(const FileState&) const = default;
};

/// Every entry under root: files with mtime, atime, size and hash; directories with mtime.
std::map<std::string, FileState> snapshot(const std::string& root)
{
    std::map<std::string, FileState> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0)
            continue;
        FileState s;
        s.mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        if (S_ISREG(st.st_mode)) {
            s.atimeNs = int64_t(st.st_atim.tv_sec) * 1000000000 + st.st_atim.tv_nsec;
            s.size = static_cast<uint64_t>(st.st_size);
            s.sha = ckpt::sha256File(e.path().string()).hex(); // O_NOATIME: the snapshot must not touch atimes either
        }
        out[e.path().lexically_relative(root).generic_string()] = s;
    }
    return out;
}

} // namespace

class TestManifestAudit : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    std::string m_pristine; // generated tiny-mlp run, never modified
    int m_copies = 0;

    /// A fresh copy of the generated run to break.
    std::string copyRun()
    {
        const std::string dst = m_tmp.path().toStdString() + "/copy-" + std::to_string(++m_copies) + "/tiny-mlp";
        fs::create_directories(fs::path(dst).parent_path());
        fs::copy(m_pristine, dst, fs::copy_options::recursive);
        return dst;
    }

    json manifestOf(const std::string& checkpointDir) { return readJson(checkpointDir + "/manifest.json"); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        const QString out = m_tmp.path() + QStringLiteral("/generated");
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral(CKPT_SOURCE_DIR "/sample_runs/make_sample_runs.py"), out});
        QVERIFY2(p.waitForFinished(600000), "make_sample_runs.py did not finish");
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, p.readAll().constData());
        m_pristine = out.toStdString() + "/tiny-mlp";
        QVERIFY(fs::is_directory(m_pristine + "/checkpoint-0000150"));
        QVERIFY(fs::exists(m_pristine + "/latest"));
    }

    // ---- SHA-256 ---------------------------------------------------------------------------

    void sha256KnownVectors()
    {
        QCOMPARE(q(ckpt::sha256Hex({})), QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        const std::string abc = "abc";
        QCOMPARE(q(ckpt::sha256Hex(std::as_bytes(std::span(abc)))),
                 QByteArray("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        const std::string million(1000000, 'a');
        QCOMPARE(q(ckpt::sha256Hex(std::as_bytes(std::span(million)))),
                 QByteArray("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));

        // Streaming in uneven pieces gives the same digest.
        ckpt::Sha256 h;
        for (std::size_t i = 0; i < million.size();) {
            const std::size_t n = std::min<std::size_t>(million.size() - i, 1 + i % 4099);
            h.update(million.data() + i, n);
            i += n;
        }
        QCOMPARE(q(ckpt::toHex(h.finish())), QByteArray("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    void sha256FileStreamsInChunks()
    {
        // 3 chunks and a tail: the file digest equals the in-memory one, with one callback per chunk.
        std::vector<std::byte> data(3 * ckpt::kSha256FileChunk + 12345);
        std::mt19937 rng(7);
        for (auto& b : data)
            b = std::byte(rng() & 0xff);
        const std::string path = m_tmp.path().toStdString() + "/random.bin";
        writeFile(path, data);
        int calls = 0;
        uint64_t seen = 0;
        const auto r = ckpt::sha256File(path, [&](uint64_t n) {
            ++calls;
            seen += n;
            return true;
        });
        QCOMPARE(r.bytes, uint64_t(data.size()));
        QCOMPARE(seen, uint64_t(data.size()));
        QCOMPARE(calls, 4);
        QCOMPARE(q(r.hex()), q(ckpt::sha256Hex(data)));
        // Cancelling from the callback stops at once.
        int cancelCalls = 0;
        QVERIFY_THROWS_EXCEPTION(ckpt::CancelledError, ckpt::sha256File(path, [&](uint64_t) { return ++cancelCalls < 2; }));
        QCOMPARE(cancelCalls, 2);
        QVERIFY_THROWS_EXCEPTION(ckpt::FormatError, ckpt::sha256File(path + ".absent"));
        QVERIFY_THROWS_EXCEPTION(ckpt::FormatError, ckpt::sha256File(m_tmp.path().toStdString()));
    }

    void sha256MatchesPythonManifests()
    {
        // The manifests were hashed by Python's hashlib: an independent implementation.
        int checked = 0;
        for (const char* c : {"checkpoint-0000050", "checkpoint-0000100", "checkpoint-0000150"}) {
            const std::string dir = m_pristine + "/" + c;
            const json manifest = manifestOf(dir);
            for (const auto& [name, entry] : manifest["files"].items()) {
                const auto r = ckpt::sha256File(dir + "/" + name);
                QCOMPARE(q(r.hex()), q(entry["sha256"].get<std::string>()));
                QCOMPARE(r.bytes, entry["bytes"].get<uint64_t>());
                ++checked;
            }
        }
        QCOMPARE(checked, 9);
    }

    // ---- clean inputs ------------------------------------------------------------------------

    void cleanRunHasNoFindings()
    {
        const std::string run = copyRun();
        uint64_t listed = 0;
        for (const char* c : {"checkpoint-0000050", "checkpoint-0000100", "checkpoint-0000150"}) {
            const json manifest = manifestOf(run + "/" + c);
            for (const auto& [_, entry] : manifest["files"].items())
                listed += entry["bytes"].get<uint64_t>();
        }
        for (unsigned threads : {0u, 1u, 3u}) {
            ckpt::AuditOptions options;
            options.threads = threads;
            const auto r = ckpt::auditPath(run, options);
            QVERIFY2(r.findings.empty(), describe(r).constData());
            QCOMPARE(r.checkpoints, std::size_t(3));
            QCOMPARE(r.filesChecked, std::size_t(9));
            QCOMPARE(r.bytesHashed, listed);
            QVERIFY(!r.cancelled);
        }
        // One checkpoint directory, with or without a trailing slash, and its manifest.json.
        for (const std::string& p : {run + "/checkpoint-0000100", run + "/checkpoint-0000100/",
                                    run + "/checkpoint-0000100/manifest.json"}) {
            const auto r = ckpt::auditPath(p);
            QVERIFY2(r.findings.empty(), (q(p) + describe(r)).constData());
            QCOMPARE(r.checkpoints, std::size_t(1));
            QCOMPARE(r.filesChecked, std::size_t(3));
        }
        // A symlinked `latest` is as good as a pointer file.
        fs::remove(run + "/latest");
        fs::create_directory_symlink("checkpoint-0000150", run + "/latest");
        const auto r = ckpt::auditPath(run);
        QVERIFY2(r.findings.empty(), describe(r).constData());
    }

    // ---- broken copies -----------------------------------------------------------------------

    void flippedByte()
    {
        const std::string run = copyRun();
        const std::string file = run + "/checkpoint-0000100/model.pt";
        flipByte(file, 200);
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.hash-mismatch"});
        const auto& f = r.findings[0];
        QCOMPARE(f.severity, ckpt::Severity::Error);
        QCOMPARE(f.component, ckpt::Component::Integrity);
        QCOMPARE(q(f.file), q(file));
        QCOMPARE(f.checkpoints, std::vector<std::string>{run + "/checkpoint-0000100"});
        QCOMPARE(f.evidence.size(), std::size_t(2));
        QCOMPARE(q(f.evidence[0].where), QByteArray("checkpoint-0000100/manifest.json: files.model.pt.sha256"));
        QCOMPARE(q(f.evidence[0].value), q(manifestOf(run + "/checkpoint-0000100")["files"]["model.pt"]["sha256"].get<std::string>()));
        QCOMPARE(q(f.evidence[1].where), QByteArray("checkpoint-0000100/model.pt"));
        QCOMPARE(q(f.evidence[1].value), q(ckpt::sha256File(file).hex()));
        QVERIFY(!f.hint.empty());
        QCOMPARE(r.filesChecked, std::size_t(9));
    }

    void flippedByteInLatest()
    {
        const std::string run = copyRun();
        flipByte(run + "/checkpoint-0000150/optimizer.pt", 100);
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.hash-mismatch", "integrity.latest-incomplete"}));
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000150/optimizer.pt"));
        const auto& latest = r.findings[1];
        QCOMPARE(latest.severity, ckpt::Severity::Error);
        QCOMPARE(q(latest.file), q(run + "/latest"));
        QCOMPARE(latest.checkpoints, std::vector<std::string>{run + "/checkpoint-0000150"});
        // The hint names where to roll back to.
        QVERIFY2(latest.hint.find(run + "/checkpoint-0000100") != std::string::npos, latest.hint.c_str());
    }

    void truncatedFile()
    {
        const std::string run = copyRun();
        const std::string file = run + "/checkpoint-0000050/optimizer.pt";
        const auto size = fs::file_size(file);
        fs::resize_file(file, size / 2);
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.size-mismatch", "integrity.hash-mismatch"}));
        for (const auto& f : r.findings)
            QCOMPARE(q(f.file), q(file));
        const auto& s = r.findings[0];
        QCOMPARE(q(s.evidence[0].value), q(std::to_string(size)));
        QCOMPARE(q(s.evidence[0].where), QByteArray("checkpoint-0000050/manifest.json: files.optimizer.pt.bytes"));
        QCOMPARE(q(s.evidence[1].value), q(std::to_string(size / 2)));
    }

    void deletedFile()
    {
        const std::string run = copyRun();
        fs::remove(run + "/checkpoint-0000100/model.pt");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.missing-file"});
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000100/model.pt"));
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
        QCOMPARE(r.filesChecked, std::size_t(8));
    }

    void deletedRngFileIsAnRngFinding()
    {
        const std::string run = copyRun();
        fs::remove(run + "/checkpoint-0000100/rng-rank-0.pt");
        const auto r = ckpt::auditPath(run);
        // Listed in the manifest: a missing file (not also a missing rank).
        QCOMPARE(rules(r), QStringList{"integrity.missing-file"});
        QCOMPARE(r.findings[0].component, ckpt::Component::Rng);
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000100/rng-rank-0.pt"));
    }

    void extraFiles()
    {
        const std::string run = copyRun();
        writeText(run + "/checkpoint-0000050/notes.txt", "left over");
        fs::create_directory(run + "/checkpoint-0000050/extra");
        writeText(run + "/checkpoint-0000050/extra/blob.bin", "x");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.unexpected-file", "integrity.unexpected-file"}));
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000050/extra/blob.bin"));
        QCOMPARE(q(r.findings[1].file), q(run + "/checkpoint-0000050/notes.txt"));
        for (const auto& f : r.findings)
            QCOMPARE(f.severity, ckpt::Severity::Warning);
    }

    // Members nobody can read are findings, never skipped: a symlink loop, a dangling link, a FIFO
    // (which would block a loader). Directory symlinks, even to their own folder, are not followed.
    void unreadableMembers()
    {
        const std::string run = copyRun();
        const std::string ck = run + "/checkpoint-0000050";
        fs::create_symlink("loop-b", ck + "/loop-a");
        fs::create_symlink("loop-a", ck + "/loop-b");
        fs::create_symlink("nowhere.pt", ck + "/dangling.pt");
        fs::create_directory_symlink(".", ck + "/self");
        QCOMPARE(::mkfifo((ck + "/pipe.bin").c_str(), 0644), 0);
        const auto r = ckpt::auditPath(run);
        QStringList unreadable;
        for (const auto& f : r.findings) {
            if (f.rule == "integrity.file-unreadable") {
                unreadable << q(fs::path(f.file).filename().string()) + ": " + q(f.message);
                QCOMPARE(f.severity, ckpt::Severity::Error);
            }
        }
        unreadable.sort();
        QCOMPARE(unreadable.size(), 4);
        QVERIFY2(unreadable[0].startsWith("dangling.pt") && unreadable[0].contains("symbolic link to nothing (nowhere.pt)"), qPrintable(unreadable[0]));
        QVERIFY2(unreadable[1].startsWith("loop-a") && unreadable[1].contains("symbolic link loop"), qPrintable(unreadable[1]));
        QVERIFY2(unreadable[2].startsWith("loop-b") && unreadable[2].contains("symbolic link loop"), qPrintable(unreadable[2]));
        QVERIFY2(unreadable[3].startsWith("pipe.bin") && unreadable[3].contains("FIFO"), qPrintable(unreadable[3]));
    }

    void completeRemoved()
    {
        const std::string run = copyRun();
        fs::remove(run + "/checkpoint-0000100/COMPLETE");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.no-complete-marker"});
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000100/COMPLETE"));
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
    }

    void completeRemovedFromLatest()
    {
        const std::string run = copyRun();
        fs::remove(run + "/checkpoint-0000150/COMPLETE");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.no-complete-marker", "integrity.latest-incomplete"}));
        QVERIFY(r.findings[1].message.find("COMPLETE") != std::string::npos);
        QVERIFY(r.findings[1].hint.find(run + "/checkpoint-0000100") != std::string::npos);
    }

    void latestPointsAtMissingCheckpoint()
    {
        const std::string run = copyRun();
        writeText(run + "/latest", "checkpoint-0000200\n");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.latest-invalid"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
        QCOMPARE(q(r.findings[0].file), q(run + "/latest"));
        QVERIFY(r.findings[0].message.find("checkpoint-0000200") != std::string::npos);
    }

    void latestPointsAtIncompleteCheckpoint()
    {
        const std::string run = copyRun();
        fs::copy(run + "/checkpoint-0000150", run + "/checkpoint-0000200", fs::copy_options::recursive);
        fs::remove(run + "/checkpoint-0000200/COMPLETE");
        writeText(run + "/latest", "checkpoint-0000200\n");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.no-complete-marker", "integrity.latest-incomplete"}));
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000200/COMPLETE"));
        QCOMPARE(r.findings[1].checkpoints, std::vector<std::string>{run + "/checkpoint-0000200"});
        QVERIFY(r.findings[1].hint.find(run + "/checkpoint-0000150") != std::string::npos);
    }

    void latestStaleEmptyOrAbsent()
    {
        const std::string run = copyRun();
        writeText(run + "/latest", "checkpoint-0000100");
        auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.latest-stale"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Warning);

        writeText(run + "/latest", "  \n");
        r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.latest-invalid"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);

        fs::remove(run + "/latest");
        r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.latest-invalid"});
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Warning);
    }

    void worldSizeFourWithOneRngFile()
    {
        const std::string run = copyRun();
        const std::string dir = run + "/checkpoint-0000050";
        json m = manifestOf(dir);
        m["world_size"] = 4;
        writeText(dir + "/manifest.json", m.dump(2));
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.rng-rank-missing", "integrity.rng-rank-missing", "integrity.rng-rank-missing"}));
        for (int i = 0; i < 3; ++i) {
            const auto& f = r.findings[std::size_t(i)];
            QCOMPARE(f.component, ckpt::Component::Rng);
            QCOMPARE(f.severity, ckpt::Severity::Error);
            QCOMPARE(q(f.file), q(dir + "/rng-rank-" + std::to_string(i + 1) + ".pt"));
            QCOMPARE(q(f.evidence[0].where), QByteArray("checkpoint-0000050/manifest.json: world_size"));
            QCOMPARE(q(f.evidence[0].value), QByteArray("4"));
        }
    }

    void rngFileBeyondWorldSize()
    {
        const std::string run = copyRun();
        const std::string dir = run + "/checkpoint-0000050";
        fs::copy_file(dir + "/rng-rank-0.pt", dir + "/rng-rank-1.pt");
        const auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.unexpected-file", "integrity.rng-rank-extra"}));
        for (const auto& f : r.findings) {
            QCOMPARE(f.component, ckpt::Component::Rng);
            QCOMPARE(q(f.file), q(dir + "/rng-rank-1.pt"));
        }
    }

    void corruptManifest()
    {
        const std::string run = copyRun();
        writeText(run + "/checkpoint-0000100/manifest.json", "{\"files\": {\"model.pt\": ");
        auto r = ckpt::auditPath(run);
        QCOMPARE(rules(r), QStringList{"integrity.manifest-unreadable"});
        QCOMPARE(q(r.findings[0].file), q(run + "/checkpoint-0000100/manifest.json"));
        QCOMPARE(r.findings[0].severity, ckpt::Severity::Error);
        QVERIFY(r.findings[0].message.find("not valid JSON") != std::string::npos);
        QCOMPARE(r.filesChecked, std::size_t(6));

        // Valid JSON of the wrong shape, in the checkpoint `latest` names.
        writeText(run + "/checkpoint-0000150/manifest.json", "[1, 2, 3]");
        r = ckpt::auditPath(run);
        QCOMPARE(rules(r), (QStringList{"integrity.manifest-unreadable", "integrity.manifest-unreadable",
                                        "integrity.latest-incomplete"}));
        QCOMPARE(q(r.findings[1].file), q(run + "/checkpoint-0000150/manifest.json"));
        QVERIFY(r.findings[2].hint.find(run + "/checkpoint-0000050") != std::string::npos);

        // Bad entries: a path escaping the directory, a malformed hash.
        json m = manifestOf(run + "/checkpoint-0000050");
        m["files"]["../../etc/passwd"] = {{"bytes", 1}, {"sha256", std::string(64, '0')}};
        m["files"]["model.pt"]["sha256"] = "xyz";
        writeText(run + "/checkpoint-0000050/manifest.json", m.dump());
        r = ckpt::auditPath(run + "/checkpoint-0000050");
        QCOMPARE(rules(r), (QStringList{"integrity.manifest-unreadable", "integrity.manifest-unreadable"}));
        QCOMPARE(q(r.findings[0].evidence[0].where), QByteArray("checkpoint-0000050/manifest.json: files.../../etc/passwd"));
        QCOMPARE(q(r.findings[1].evidence[0].where), QByteArray("checkpoint-0000050/manifest.json: files.model.pt.sha256"));
    }

    // ---- progress, cancellation, read-only ---------------------------------------------------

    void progressReportsEveryFile()
    {
        const std::string run = copyRun();
        std::vector<ckpt::AuditProgress> seen;
        ckpt::AuditOptions options;
        options.threads = 2;
        options.progress = [&](const ckpt::AuditProgress& p) {
            seen.push_back(p);
            return true;
        };
        const auto r = ckpt::auditPath(run, options);
        QVERIFY(r.findings.empty());
        QVERIFY(seen.size() >= 2);
        QCOMPARE(seen.front().bytesDone, uint64_t(0));
        for (std::size_t i = 1; i < seen.size(); ++i) {
            QVERIFY(seen[i].bytesDone >= seen[i - 1].bytesDone);
            QVERIFY(seen[i].filesDone >= seen[i - 1].filesDone);
        }
        QCOMPARE(seen.back().filesDone, std::size_t(9));
        QCOMPARE(seen.back().filesTotal, std::size_t(9));
        QCOMPARE(seen.back().bytesDone, seen.back().bytesTotal);
        QCOMPARE(seen.back().bytesTotal, r.bytesHashed);
    }

    void cancelFromProgress()
    {
        const std::string run = copyRun();
        const auto full = ckpt::auditPath(run);
        // Refusing the very first call: nothing is hashed.
        ckpt::AuditOptions options;
        options.threads = 1;
        options.progress = [](const ckpt::AuditProgress&) { return false; };
        auto r = ckpt::auditPath(run, options);
        QVERIFY(r.cancelled);
        QCOMPARE(r.bytesHashed, uint64_t(0));
        QCOMPARE(r.filesChecked, std::size_t(0));

        // Refusing after the first chunk: the run stops early.
        for (unsigned threads : {1u, 4u}) {
            int calls = 0;
            options.threads = threads;
            options.progress = [&](const ckpt::AuditProgress&) { return ++calls < 2; };
            r = ckpt::auditPath(run, options);
            QVERIFY(r.cancelled);
            QCOMPARE(calls, 2);
            QVERIFY(r.filesChecked < full.filesChecked);
            QVERIFY(r.bytesHashed < full.bytesHashed);
            QVERIFY2(r.findings.empty(), describe(r).constData()); // partial, but nothing false
        }
    }

    void auditIsReadOnly()
    {
        const std::string run = copyRun();
        fs::remove(run + "/checkpoint-0000100/COMPLETE"); // exercise the failure paths too
        writeText(run + "/checkpoint-0000050/notes.txt", "x");
        // Let the clock move past the copy, so an access-time update would be visible.
        QTest::qWait(20);
        const auto before = snapshot(run);
        QVERIFY(before.size() > 10);
        QVERIFY(!ckpt::auditPath(run).findings.empty());
        QCOMPARE(runCkpt({QStringLiteral("audit"), QString::fromStdString(run), QStringLiteral("--json")}).code, 1);
        const auto after = snapshot(run);
        QCOMPARE(after.size(), before.size());
        for (const auto& [path, state] : before) {
            QVERIFY2(after.contains(path), path.c_str());
            QVERIFY2(after.at(path) == state, ("changed: " + path).c_str());
        }
    }

    void unreadablePaths()
    {
        QVERIFY_THROWS_EXCEPTION(ckpt::OpenError, ckpt::auditPath(m_tmp.path().toStdString() + "/absent"));
        QVERIFY_THROWS_EXCEPTION(ckpt::OpenError, ckpt::auditPath(m_pristine + "/checkpoint-0000050/model.pt"));
        const std::string empty = m_tmp.path().toStdString() + "/empty";
        fs::create_directories(empty);
        QVERIFY_THROWS_EXCEPTION(ckpt::OpenError, ckpt::auditPath(empty));
        try {
            ckpt::auditPath(empty);
        } catch (const ckpt::OpenError& e) {
            QCOMPARE(q(e.path()), q(empty));
        }
    }

    // ---- ckpt audit --------------------------------------------------------------------------

    void cliExitCodes()
    {
        QVERIFY2(fs::exists(CKPT_BIN), "build the `ckpt` target first");
        const std::string run = copyRun();
        CkptRun r = runCkpt({QStringLiteral("audit"), QString::fromStdString(run), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.isEmpty(), r.err.constData()); // no progress line: stderr is not a terminal
        json j = json::parse(r.out.toStdString());
        QCOMPARE(j["files_checked"].get<int>(), 9);
        QVERIFY(j["bytes_hashed"].get<uint64_t>() > 0);
        QVERIFY(j["findings"].is_array() && j["findings"].empty());

        r = runCkpt({QStringLiteral("audit"), QString::fromStdString(run)});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("no findings"));

        flipByte(run + "/checkpoint-0000050/model.pt", 10);
        r = runCkpt({QStringLiteral("audit"), QString::fromStdString(run), QStringLiteral("--json")});
        QCOMPARE(r.code, 1);
        j = json::parse(r.out.toStdString());
        QCOMPARE(j["findings"].size(), std::size_t(1));
        const json& f = j["findings"][0];
        QCOMPARE(q(f["rule"].get<std::string>()), QByteArray("integrity.hash-mismatch"));
        QCOMPARE(q(f["severity"].get<std::string>()), QByteArray("error"));
        QCOMPARE(q(f["component"].get<std::string>()), QByteArray("integrity"));
        QCOMPARE(q(f["file"].get<std::string>()), q(run + "/checkpoint-0000050/model.pt"));
        QVERIFY(f["checkpoints"] == json::array({run + "/checkpoint-0000050"}));
        QCOMPARE(q(f["evidence"][0]["where"].get<std::string>()), QByteArray("checkpoint-0000050/manifest.json: files.model.pt.sha256"));
        for (const char* key : {"what", "value", "where"})
            QVERIFY(f["evidence"][0].contains(key));
        QVERIFY(f["hint"].is_string() && !f["message"].get<std::string>().empty());

        r = runCkpt({QStringLiteral("audit"), QString::fromStdString(run)});
        QCOMPARE(r.code, 1);
        QVERIFY(r.out.contains("integrity.hash-mismatch"));

        const std::string absent = run + "/no-such-dir";
        r = runCkpt({QStringLiteral("audit"), QString::fromStdString(absent), QStringLiteral("--json")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.startsWith(q("ckpt: " + absent + ": ")), r.err.constData());

        r = runCkpt({QStringLiteral("audit")});
        QCOMPARE(r.code, 2);
    }
};

QTEST_GUILESS_MAIN(TestManifestAudit)
#include "tst_manifest_audit.moc"
