// SPDX-License-Identifier: MIT
// Random-generator states: runs tests/fixtures/make_rng_states.py (Debian's PyTorch) into a
// temporary directory and compares what findRngStates decodes with what Python knew when it
// saved them: seeds, positions, cached normals, which states must share a fingerprint and
// which must not, the corrupt ones, and where each was found. Then a real HF rng_state.pth.
#include "test_support.h"

#include "ckpt/state/rng_state.h"

#include <QCoreApplication>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <map>
#include <memory>
#include <set>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

namespace {

const char* kHfCorpusFile = "chathuri2020__text_to_sql_fine_tuned_checkpoint_1000/rng_state.pth";

const RngState* stateAt(const std::vector<RngState>& states, const json& key)
{
    for (const RngState& s : states) {
        if (keyString(s.key) == keyString(key))
            return &s;
    }
    return nullptr;
}

std::string describe(const RngState& s)
{
    return std::string(rngKindName(s.kind)) + " at " + formatKeyPath(s.key) + " fp=" + s.fingerprint
         + (s.valid ? "" : " invalid: " + s.problem);
}

template <typename T>
std::string optionalText(const std::optional<T>& v)
{
    if (!v)
        return "null";
    if constexpr (std::is_floating_point_v<T>) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", *v);
        return buf;
    } else {
        return std::to_string(*v);
    }
}

bool isHex16(const std::string& s)
{
    return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

class TestRngState : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    json m_expected;
    std::map<std::string, std::unique_ptr<CheckpointFile>> m_files;
    std::map<std::string, std::vector<RngState>> m_states;

    const std::vector<RngState>& statesOf(const std::string& name)
    {
        auto it = m_states.find(name);
        if (it == m_states.end()) {
            auto file = CheckpointFile::open(m_dir.filePath(QString::fromStdString(name)).toStdString());
            it = m_states.emplace(name, findRngStates(*file)).first;
            m_files.emplace(name, std::move(file));
        }
        return it->second;
    }

    const RngState* find(const json& ref)
    {
        return stateAt(statesOf(ref[0].get<std::string>()), ref[1]);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString script = QStringLiteral(CKPT_SOURCE_DIR "/tests/fixtures/make_rng_states.py");
        QProcess python;
        python.setProcessChannelMode(QProcess::MergedChannels);
        python.start(QStringLiteral(CKPT_PYTHON), {script, m_dir.path()});
        QVERIFY2(python.waitForStarted(), "cannot start " CKPT_PYTHON);
        QVERIFY2(python.waitForFinished(180000), "make_rng_states.py did not finish");
        const QByteArray log = python.readAll();
        QVERIFY2(python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0, log.constData());
        m_expected = readJson(m_dir.filePath("rng_expected.json").toStdString());
        QVERIFY(m_expected["files"].size() >= 8);
    }

    void decodedMatchesPython_data()
    {
        QTest::addColumn<QString>("file");
        for (const auto& [name, entries] : m_expected["files"].items())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }

    // Every state Python saved is found at its key with its kind, validity, seed, offset,
    // position and cached normal; nothing else is found (decoys.pt expects nothing at all).
    void decodedMatchesPython()
    {
        QFETCH(QString, file);
        const std::string name = file.toStdString();
        const json& entries = m_expected["files"][name];
        const auto& states = statesOf(name);
        std::string found;
        for (const RngState& s : states)
            found += "\n  " + describe(s);
        QVERIFY2(states.size() == entries.size(),
                 ("expected " + std::to_string(entries.size()) + " states, found:" + found).c_str());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const json& e = entries[i];
            const std::string where = name + " " + keyString(e["key"]);
            const RngState* s = stateAt(states, e["key"]);
            QVERIFY2(s, ("no state at " + where + "; found:" + found).c_str());
            QCOMPARE(keyString(states[i].key), keyString(e["key"])); // in torch.load's order
            QCOMPARE(std::string(rngKindName(s->kind)), e["kind"].get<std::string>());
            QVERIFY2(s->valid == e["valid"].get<bool>(), (where + ": " + describe(*s)).c_str());
            QVERIFY2(s->valid == s->problem.empty(), (where + ": " + describe(*s)).c_str());
            QVERIFY2(isHex16(s->fingerprint), (where + ": " + s->fingerprint).c_str());

            auto expectInt = [&](const char* field, auto actual) {
                const json& v = e[field];
                const std::string want = v.is_null() ? "null" : v.dump();
                QVERIFY2(optionalText(actual) == want,
                         (where + " " + field + ": " + optionalText(actual) + " != Python's " + want).c_str());
            };
            expectInt("seed", s->seed);
            expectInt("offset", s->offset);
            expectInt("position", s->position);
            expectInt("drawn", s->drawnSinceSeed);
            const json& g = e["gauss"];
            QVERIFY2(g.is_null() ? !s->gaussCache : (s->gaussCache && *s->gaussCache == g.get<double>()),
                     (where + " gauss: " + optionalText(s->gaussCache) + " != Python's " + g.dump()).c_str());
        }
    }

    void equalStatesShareFingerprints()
    {
        for (const json& group : m_expected["same"]) {
            const RngState* first = find(group[0]);
            QVERIFY2(first, ("missing " + group[0].dump()).c_str());
            for (const json& ref : group) {
                const RngState* s = find(ref);
                QVERIFY2(s, ("missing " + ref.dump()).c_str());
                QVERIFY2(s->fingerprint == first->fingerprint,
                         (ref.dump() + " " + s->fingerprint + " != " + group[0].dump() + " " + first->fingerprint).c_str());
            }
        }
    }

    void differentStatesDiffer()
    {
        for (const json& group : m_expected["different"]) {
            std::map<std::string, std::string> seen; // fingerprint -> first ref
            for (const json& ref : group) {
                const RngState* s = find(ref);
                QVERIFY2(s, ("missing " + ref.dump()).c_str());
                const auto [it, fresh] = seen.emplace(s->fingerprint, ref.dump());
                QVERIFY2(fresh, (ref.dump() + " has the fingerprint of " + it->second).c_str());
            }
        }
        // Across kinds too: no two different states in the whole fixture set collide.
        std::map<std::string, std::set<std::string>> byFingerprint;
        for (const auto& [name, entries] : m_expected["files"].items()) {
            for (const RngState& s : statesOf(name))
                byFingerprint[s.fingerprint].insert(rngKindName(s.kind));
        }
        for (const auto& [fp, kinds] : byFingerprint)
            QVERIFY2(kinds.size() == 1, ("fingerprint " + fp + " shared by different kinds").c_str());
    }

    void corruptStatesSayWhy()
    {
        const auto& states = statesOf("corrupt.pt");
        const std::map<std::string, std::string> expectedProblem = {
            {"[\"python\"]", "all zero"},
            {"[\"numpy\"]", "pos 700"},
            {"[\"numpy_short\"]", "(623,)"},
            {"[\"cpu\"]", "left 0"},
            {"[\"cuda\"]", "multiple of 4"},
        };
        for (const auto& [key, text] : expectedProblem) {
            const RngState* s = stateAt(states, json::parse(key));
            QVERIFY2(s, ("no state at " + key).c_str());
            QVERIFY2(!s->valid && s->problem.find(text) != std::string::npos,
                     (key + ": expected a problem mentioning '" + text + "', got: " + describe(*s)).c_str());
        }
    }

    // The decoders on their own: each refuses what is not its kind; the CUDA sizes need the hint.
    void decodersStandalone()
    {
        const auto& states = statesOf("rng_state.pth");
        QVERIFY(!states.empty());
        const CheckpointFile& file = *m_files.at("rng_state.pth");
        const ValueGraph& g = file.graph();
        const NodeId py = g.get(file.root(), "python");
        const NodeId np = g.get(file.root(), "numpy");
        QVERIFY(py != kNoNode && np != kNoNode);

        const auto p = decodePythonRandom(g, py);
        QVERIFY(p && p->kind == RngKind::PythonMt19937 && p->key.empty());
        QCOMPARE(p->fingerprint, stateAt(states, json::array({"python"}))->fingerprint);
        QVERIFY(!decodePythonRandom(g, np));
        QVERIFY(!decodePythonRandom(g, file.root()));
        QVERIFY(!decodePythonRandom(g, kNoNode));

        const auto n = decodeNumpyRandom(file.document(), np);
        QVERIFY(n && n->kind == RngKind::NumpyMt19937 && n->valid);
        QVERIFY(!decodeNumpyRandom(file.document(), py));
        QVERIFY(!decodeNumpyRandom(file.document(), file.root()));

        int cpu = 0, cuda = 0;
        for (const TensorEntry& te : file.tensorEntries()) {
            const TensorInfo& t = file.tensors()[te.tensor];
            const auto plain = decodeTorchGenerator(file, t, false);
            const auto hinted = decodeTorchGenerator(file, t, true);
            if (t.numel() == 5056) {
                ++cpu;
                QVERIFY(plain && hinted && plain->kind == RngKind::TorchCpu && plain->fingerprint == hinted->fingerprint);
            } else {
                ++cuda;
                QVERIFY(!plain); // 816 and 16 bytes are CUDA states only under a cuda key
                QVERIFY(hinted && hinted->kind == RngKind::TorchCuda && hinted->seed == 42u);
            }
        }
        QCOMPARE(cpu, 1);
        QCOMPARE(cuda, 2);
    }

    void kindNames()
    {
        QCOMPARE(rngKindName(RngKind::PythonMt19937), "python");
        QCOMPARE(rngKindName(RngKind::NumpyMt19937), "numpy");
        QCOMPARE(rngKindName(RngKind::TorchCpu), "torch_cpu");
        QCOMPARE(rngKindName(RngKind::TorchCuda), "torch_cuda");
    }

    // A real Hugging Face Trainer rng_state.pth (torch >= 2.1: a single 16-byte "cuda" tensor,
    // saved with torch.cuda.get_rng_state() rather than a per-device list).
    // Values as torch.load shows them: torch seed 42, next 40; python index and numpy pos 624;
    // CUDA seed 42, offset 5120000.
    void realHfRngState()
    {
        const std::string corpus = corpusDir();
        const std::string path = corpus.empty() ? std::string() : corpus + "/" + kHfCorpusFile;
        if (path.empty() || !std::filesystem::exists(path))
            QSKIP("the shared corpus' HF rng_state.pth is not available");
        const auto file = CheckpointFile::open(path);
        const auto states = findRngStates(*file);
        std::string found;
        for (const RngState& s : states)
            found += "\n  " + describe(s);
        QVERIFY2(states.size() == 4, found.c_str());
        const RngState* py = stateAt(states, json::array({"python"}));
        const RngState* np = stateAt(states, json::array({"numpy"}));
        const RngState* cpu = stateAt(states, json::array({"cpu"}));
        const RngState* cuda = stateAt(states, json::array({"cuda"}));
        QVERIFY2(py && np && cpu && cuda, found.c_str());
        QCOMPARE(py->kind, RngKind::PythonMt19937);
        QCOMPARE(np->kind, RngKind::NumpyMt19937);
        QCOMPARE(cpu->kind, RngKind::TorchCpu);
        QCOMPARE(cuda->kind, RngKind::TorchCuda);
        for (const RngState* s : {py, np, cpu, cuda})
            QVERIFY2(s->valid && isHex16(s->fingerprint), describe(*s).c_str());
        QCOMPARE(py->position, std::optional<int64_t>(624));
        QCOMPARE(np->position, std::optional<int64_t>(624));
        QCOMPARE(cpu->seed, std::optional<uint64_t>(42));
        QCOMPARE(cpu->position, std::optional<int64_t>(40));
        QCOMPARE(cuda->seed, std::optional<uint64_t>(42));
        QCOMPARE(cuda->offset, std::optional<uint64_t>(5120000));
        // HF's set_seed(42) seeds Python and numpy as our fixture did, and neither was drawn
        // from: the same states, written by another Python/numpy/torch, hash the same.
        QCOMPARE(py->fingerprint, find(json::array({"seed42.pt", {"python"}}))->fingerprint);
        QCOMPARE(np->fingerprint, find(json::array({"seed42.pt", {"numpy"}}))->fingerprint);
    }
};

QTEST_GUILESS_MAIN(TestRngState)
#include "tst_rng_state.moc"
