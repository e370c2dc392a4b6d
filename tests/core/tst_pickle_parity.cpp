// SPDX-License-Identifier: MIT
// The pickle machine against CPython's own unpickler (issues 17 and 34, parity): tests/fixtures/
// make_pickle_parity.py writes thousands of benign pickles (pickle.dumps of random values in every
// protocol, pickletools.optimize'd, hand-made opcode streams for every opcode and the edges of
// protocol 0's text numbers, random opcode streams, byte-level mutants of the fuzz corpus, and
// CPython's own test pickles with the exit code `ckpt imports` must give) with the canonical form of what
// /usr/bin/python3's C unpickler built, or the error it raised. Here the machine reads each file,
// its graph is rendered in the same canonical form (evaluating the few allow-listed globals the
// way CPython does), and both must agree: the same value for every file CPython reads, a refusal
// for every file it refuses, except where the manifest documents why not ("superset": read on
// purpose; "refused_on_purpose": a FRAME read that CPython's readers disagree about).
#include "test_support.h"

#include "ckpt/io/errors.h"
#include "ckpt/pickle/codec_names.h"
#include "ckpt/pickle/pickle_machine.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

using namespace ckpt;
using json = nlohmann::json;

namespace {

// CKPT_PICKLE_PARITY_DIR: another set from make_pickle_parity.py (tests/fuzz/differential_cpython.sh
// runs the differential campaign against CPython this way, round after round of new seeds).
std::string dataDir()
{
    if (const char* dir = std::getenv("CKPT_PICKLE_PARITY_DIR"); dir && *dir)
        return dir;
    return std::string(CKPT_TESTDATA_DIR) + "/pickle_parity";
}

std::string hex(std::string_view s)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (unsigned char c : s) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string floatBits(double f)
{
    if (std::isnan(f))
        return "nan";
    uint64_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, bits);
    return buf;
}

// Code points of UTF-8 text (the machine's str), for str.encode('latin-1').
std::optional<std::string> latin1(std::string_view utf8)
{
    std::string out;
    for (std::size_t i = 0; i < utf8.size();) {
        const auto c = static_cast<unsigned char>(utf8[i]);
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < utf8.size()) {
            const unsigned cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3Fu);
            if (cp > 0xFF)
                return std::nullopt;
            out += static_cast<char>(cp);
            i += 2;
        } else {
            return std::nullopt;
        }
    }
    return out;
}

// Renders the machine's raw graph in make_pickle_parity.py's canonical form. Python values
// render as themselves; the allow-listed calls (set, frozenset, bytearray, bytes, complex,
// OrderedDict, _codecs.encode, copyreg._reconstructor, NEWOBJ of a plain class) are evaluated as
// CPython runs them. Anything else renders as "unrenderable", which never matches.
class Renderer {
public:
    explicit Renderer(const ValueGraph& graph) : m_graph(graph) {}

    json render(NodeId id)
    {
        if (++m_visits > 400000)
            throw std::runtime_error("rendering ran past 400000 visits");
        const Node& n = m_graph[id];
        switch (n.kind) {
        case Kind::None: return {{"t", "none"}};
        case Kind::Bool: return {{"t", "bool"}, {"v", n.flag}};
        case Kind::Int: return {{"t", "int"}, {"v", std::to_string(n.i)}};
        case Kind::BigInt:
            if (fitsInt64(n.text))
                problems.push_back("a BigInt node holds " + n.text + ", which fits int64");
            return {{"t", "int"}, {"v", n.text}};
        case Kind::Float: return {{"t", "float"}, {"v", floatBits(n.f)}};
        case Kind::String: return {{"t", "str"}, {"v", hex(n.text)}};
        case Kind::Bytes: return {{"t", "bytes"}, {"v", hex(n.text)}};
        case Kind::ByteArray:
            if (auto ref = seen(id))
                return *ref;
            return {{"t", "bytearray"}, {"id", m_ids[id]}, {"v", hex(n.text)}};
        case Kind::Tuple: {
            json items = json::array();
            for (NodeId i : n.items)
                items.push_back(render(i));
            return {{"t", "tuple"}, {"items", items}};
        }
        case Kind::FrozenSet: return {{"t", "frozenset"}, {"items", setItems(n.items)}};
        case Kind::List: {
            if (auto ref = seen(id))
                return *ref;
            json out = {{"t", "list"}, {"id", m_ids[id]}};
            json items = json::array();
            for (NodeId i : n.items)
                items.push_back(render(i));
            out["items"] = items;
            return out;
        }
        case Kind::Dict: {
            if (auto ref = seen(id))
                return *ref;
            json out = {{"t", "dict"}, {"id", m_ids[id]}};
            out["items"] = dictItems(n.items);
            return out;
        }
        case Kind::Set: {
            if (auto ref = seen(id))
                return *ref;
            json out = {{"t", "set"}, {"id", m_ids[id]}};
            out["items"] = setItems(n.items);
            return out;
        }
        case Kind::Global: return {{"t", "global"}, {"v", n.text}};
        case Kind::PersistentId: return {{"t", "persid"}, {"pid", render(n.a)}};
        case Kind::Call: return call(id);
        case Kind::NewObj: return newObject(id);
        default: return unrenderable(id, "a raw node of this kind");
        }
    }

    std::vector<std::string> problems;

private:
    static bool fitsInt64(const std::string& text)
    {
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        return ec == std::errc() && p == text.data() + text.size();
    }

    json unrenderable(NodeId id, const std::string& why)
    {
        return {{"t", "unrenderable"}, {"kind", kindName(m_graph[id].kind)}, {"text", m_graph[id].text}, {"why", why}};
    }

    // A mutable value (or object) seen before renders as a reference; else it gets the next id.
    std::optional<json> seen(NodeId id)
    {
        if (const auto it = m_ids.find(id); it != m_ids.end())
            return json{{"t", "ref"}, {"id", it->second}};
        const int next = static_cast<int>(m_ids.size());
        m_ids.emplace(id, next);
        return std::nullopt;
    }

    std::string path(NodeId id) const
    {
        return m_graph.valid(id) && m_graph[id].kind == Kind::Global ? m_graph[id].text : std::string();
    }

    std::vector<NodeId> args(const Node& n) const
    {
        if (m_graph.valid(n.b) && m_graph[n.b].kind == Kind::Tuple)
            return m_graph[n.b].items;
        return {};
    }

    std::optional<double> number(NodeId id) const
    {
        const Node& n = m_graph[id];
        if (n.kind == Kind::Float)
            return n.f;
        if (n.kind == Kind::Int)
            return static_cast<double>(n.i);
        if (n.kind == Kind::Bool)
            return n.flag ? 1.0 : 0.0;
        return std::nullopt;
    }

    // What a value is equal to in Python, as text: equal keys (1, 1.0 and True; the same NaN
    // object) give equal forms. Used for dict keys and set items, which are hashable.
    static std::string piece(const std::string& s) { return std::to_string(s.size()) + ":" + s; }

    std::string floatKey(double f, NodeId id) const
    {
        if (std::isnan(f))
            return "nan#" + std::to_string(id);
        if (std::isfinite(f) && f == std::floor(f)) {
            if (f == 0)
                return "n:0";
            char buf[400];
            std::snprintf(buf, sizeof buf, "%.0f", f);
            return std::string("n:") + buf;
        }
        return "f:" + floatBits(f);
    }

    std::string keyForm(NodeId id)
    {
        const Node& n = m_graph[id];
        switch (n.kind) {
        case Kind::None: return "none";
        case Kind::Bool: return n.flag ? "n:1" : "n:0";
        case Kind::Int: return "n:" + std::to_string(n.i);
        case Kind::BigInt: return "n:" + n.text;
        case Kind::Float: return floatKey(n.f, id);
        case Kind::String: return "s:" + n.text;
        case Kind::Bytes: return "b:" + n.text;
        case Kind::Global: return "g:" + n.text;
        case Kind::Tuple: {
            std::string out = "t(";
            for (NodeId i : n.items)
                out += piece(keyForm(i));
            return out + ")";
        }
        case Kind::FrozenSet: return frozenKey(n.items);
        case Kind::Call: {
            const std::string f = path(n.a);
            const auto a = args(n);
            if (f == "builtins.frozenset")
                return a.empty() ? frozenKey({}) : frozenKey(m_graph[a[0]].items);
            if (f == "builtins.complex" && complexParts(a)) {
                const auto [re, im] = *complexParts(a);
                if (im == 0)
                    return floatKey(re, id);
                return "c:" + (std::isnan(re) || std::isnan(im) ? "nan#" + std::to_string(id) : floatBits(re) + floatBits(im));
            }
            if (auto b = bytesOfCall(f, a))
                return "b:" + *b;
            return "obj#" + std::to_string(id);
        }
        default: return "obj#" + std::to_string(id);
        }
    }

    std::string frozenKey(const std::vector<NodeId>& items)
    {
        std::vector<std::string> forms;
        for (NodeId i : items)
            forms.push_back(keyForm(i));
        std::sort(forms.begin(), forms.end());
        forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
        std::string out = "fs{";
        for (const auto& f : forms)
            out += piece(f);
        return out + "}";
    }

    // dict semantics: an equal key keeps its first position and takes the last value.
    json dictItems(const std::vector<NodeId>& kv)
    {
        std::vector<std::pair<NodeId, NodeId>> pairs;
        std::unordered_map<std::string, std::size_t> at;
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
            const std::string k = keyForm(kv[i]);
            if (const auto it = at.find(k); it != at.end()) {
                pairs[it->second].second = kv[i + 1];
            } else {
                at.emplace(k, pairs.size());
                pairs.emplace_back(kv[i], kv[i + 1]);
            }
        }
        json items = json::array();
        for (const auto& [k, v] : pairs) {
            json key = render(k);
            items.push_back(json::array({key, render(v)}));
        }
        return items;
    }

    // set semantics: the first of equal items stays; sorted by compact JSON as the generator does.
    json setItems(const std::vector<NodeId>& values)
    {
        std::vector<NodeId> unique;
        std::unordered_map<std::string, bool> have;
        for (NodeId v : values) {
            if (have.emplace(keyForm(v), true).second)
                unique.push_back(v);
        }
        std::vector<std::pair<std::string, json>> rendered;
        for (NodeId v : unique) {
            json r = render(v);
            rendered.emplace_back(r.dump(), std::move(r));
        }
        std::sort(rendered.begin(), rendered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        json items = json::array();
        for (auto& [text, r] : rendered)
            items.push_back(std::move(r));
        return items;
    }

    // A bytes value: BINBYTES and friends, or a call that makes one.
    std::optional<std::string> bytesValue(NodeId id) const
    {
        const Node& n = m_graph[id];
        if (n.kind == Kind::Bytes)
            return n.text;
        if (n.kind == Kind::Call && path(n.a) != "builtins.bytearray")
            return bytesOfCall(path(n.a), args(n));
        return std::nullopt;
    }

    // complex(), complex(re), complex(re, im) of numbers: what CPython builds.
    std::optional<std::pair<double, double>> complexParts(const std::vector<NodeId>& a) const
    {
        if (a.empty())
            return std::make_pair(0.0, 0.0);
        if (a.size() == 1 && number(a[0]))
            return std::make_pair(*number(a[0]), 0.0);
        if (a.size() == 2 && number(a[0]) && number(a[1]))
            return std::make_pair(*number(a[0]), *number(a[1]));
        return std::nullopt;
    }

    std::optional<std::string> bytesOfCall(const std::string& f, const std::vector<NodeId>& a) const
    {
        if (f == "builtins.bytes" && a.empty())
            return std::string();
        const bool encode = f == "_codecs.encode" || f == "builtins.bytearray";
        // encode(text, encoding[, errors]): the errors handler only matters on a character latin-1
        // lacks, and then latin1() gives up too.
        const bool errorsName = a.size() == 2 || (a.size() == 3 && m_graph[a[2]].kind == Kind::String);
        if (encode && errorsName && m_graph[a[0]].kind == Kind::String && m_graph[a[1]].kind == Kind::String
            && isLatin1Codec(m_graph[a[1]].text))
            return latin1(m_graph[a[0]].text);
        const auto surrogate = [](const std::string& s) { // UTF-8 of U+D800-DFFF: ED A0-BF xx
            for (std::size_t i = 0; i + 1 < s.size(); ++i) {
                if (static_cast<unsigned char>(s[i]) == 0xED && static_cast<unsigned char>(s[i + 1]) >= 0xA0)
                    return true;
            }
            return false;
        };
        if (f == "_codecs.encode" && a.size() == 1 && m_graph[a[0]].kind == Kind::String && !surrogate(m_graph[a[0]].text))
            return m_graph[a[0]].text; // encoding='utf-8', the default
        if (f == "builtins.bytearray" && a.empty())
            return std::string();
        if (f == "builtins.bytearray" && a.size() == 1)
            return bytesValue(a[0]);
        return std::nullopt;
    }

    std::vector<NodeId> iterable(NodeId id) const
    {
        const Node& n = m_graph[id];
        return n.kind == Kind::List || n.kind == Kind::Tuple ? n.items : std::vector<NodeId>{};
    }

    json call(NodeId id)
    {
        const Node& n = m_graph[id];
        const std::string f = path(n.a);
        const auto a = args(n);
        // Thing() and object() by REDUCE build what NEWOBJ does: a plain object, filled by BUILD.
        if ((f == "__main__.Thing" || f == "builtins.object") && a.empty() && m_graph[n.b].kind == Kind::Tuple)
            return object(id, f);
        if (f == "builtins.set" && a.size() <= 1) {
            if (auto ref = seen(id))
                return *ref;
            json out = {{"t", "set"}, {"id", m_ids[id]}};
            out["items"] = setItems(a.empty() ? std::vector<NodeId>{} : iterable(a[0]));
            return out;
        }
        if (f == "builtins.frozenset" && a.size() <= 1)
            return {{"t", "frozenset"}, {"items", setItems(a.empty() ? std::vector<NodeId>{} : iterable(a[0]))}};
        if (f == "builtins.complex" && complexParts(a))
            return {{"t", "complex"}, {"re", floatBits(complexParts(a)->first)}, {"im", floatBits(complexParts(a)->second)}};
        if (f == "builtins.bytearray") {
            if (auto b = bytesOfCall(f, a)) {
                if (auto ref = seen(id))
                    return *ref;
                return {{"t", "bytearray"}, {"id", m_ids[id]}, {"v", hex(*b)}};
            }
        }
        if (auto b = bytesOfCall(f, a); b && f != "builtins.bytearray")
            return {{"t", "bytes"}, {"v", hex(*b)}};
        if (f == "collections.OrderedDict" && a.empty() && (n.ref == 0 || n.ref == kDictItems)) {
            if (auto ref = seen(id))
                return *ref;
            json out = {{"t", "odict"}, {"id", m_ids[id]}};
            out["items"] = dictItems(n.items);
            return out;
        }
        if (f == "copyreg._reconstructor" && a.size() == 3 && !path(a[0]).empty() && path(a[1]) == "builtins.object"
            && m_graph[a[2]].kind == Kind::None)
            return object(id, path(a[0]));
        return unrenderable(id, "a call of " + (f.empty() ? std::string("a non-global") : f));
    }

    json newObject(NodeId id)
    {
        const Node& n = m_graph[id];
        const std::string cls = path(n.a);
        const bool noKwargs = n.c == kNoNode || (m_graph[n.c].kind == Kind::Dict && m_graph[n.c].items.empty());
        if ((cls == "__main__.Thing" || cls == "builtins.object") && args(n).empty() && noKwargs)
            return object(id, cls);
        // set.__new__(set, *args) ignores its arguments (set.__init__ would fill it, NEWOBJ never
        // calls it): an empty set, with what ADDITEMS put there.
        if (cls == "builtins.set" && noKwargs && (n.ref == 0 || n.ref == kSetItems) && n.state == kNoNode) {
            if (auto ref = seen(id))
                return *ref;
            return {{"t", "set"}, {"id", m_ids[id]}, {"items", setItems(n.items)}};
        }
        return unrenderable(id, "an instance of " + (cls.empty() ? std::string("a non-global") : cls));
    }

    // A plain object: BUILD's states (every one, in order) fill its __dict__, slot states too.
    json object(NodeId id, const std::string& cls)
    {
        if (auto ref = seen(id))
            return *ref;
        json out = {{"t", "object"}, {"cls", cls}, {"id", m_ids[id]}};
        const Node& n = m_graph[id];
        std::vector<NodeId> states;
        if (n.state != kNoNode) {
            if (m_graph[n.state].kind == Kind::Tuple && m_graph[n.state].ref == kBuildStates)
                states = m_graph[n.state].items;
            else
                states = {n.state};
        }
        std::vector<NodeId> kv;
        auto addDict = [&](NodeId d) {
            if (m_graph[d].kind == Kind::Dict)
                kv.insert(kv.end(), m_graph[d].items.begin(), m_graph[d].items.end());
        };
        for (NodeId s : states) {
            const Node& st = m_graph[s];
            if (st.kind == Kind::Tuple && st.items.size() == 2) {
                addDict(st.items[0]);
                addDict(st.items[1]);
            } else {
                addDict(s);
            }
        }
        out["dict"] = dictItems(kv);
        return out;
    }

    const ValueGraph& m_graph;
    std::unordered_map<NodeId, int> m_ids;
    std::size_t m_visits = 0;
};

json readJsonFile(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    return json::parse(in);
}

struct Outcome {
    bool accepted = false;
    std::string error;
    json rendered;
    std::vector<std::string> problems;
};

Outcome runMachine(const std::vector<std::byte>& bytes)
{
    Outcome o;
    ValueGraph graph;
    PickleMachine vm(graph);
    try {
        const PickleRun run = vm.run(Bytes(bytes.data(), bytes.size()));
        o.accepted = true;
        Renderer r(graph);
        o.rendered = r.render(run.root);
        o.problems = std::move(r.problems);
    } catch (const LimitError& e) {
        o.error = std::string("limit: ") + e.what();
    } catch (const FormatError& e) {
        o.error = e.what();
    }
    return o;
}

struct Tally {
    int compared = 0, refusedAlike = 0, supersets = 0, onPurpose = 0, acceptedAlike = 0;
    std::vector<std::string> failures;
};

// Every manifest entry whose name starts with `prefix`, through the machine and compared.
Tally compareFamily(const std::string& prefix)
{
    Tally t;
    const json manifest = readJsonFile(dataDir() + "/manifest.json");
    for (const json& e : manifest) {
        const std::string name = e.at("name");
        if (!name.starts_with(prefix))
            continue;
        const std::string file = dataDir() + "/" + e.at("file").get<std::string>();
        const Outcome o = runMachine(testsupport::readFile(file));
        const std::string status = e.at("status");
        const std::string where = name + " (" + e.at("file").get<std::string>() + ")";
        if (e.contains("superset")) {
            ++t.supersets;
            if (!o.accepted)
                t.failures.push_back(where + ": documented as read on purpose (" + e.at("superset").get<std::string>()
                                     + ") but refused: " + o.error);
            continue;
        }
        if (e.contains("refused_on_purpose")) {
            ++t.onPurpose;
            if (o.accepted)
                t.failures.push_back(where + ": documented as refused on purpose ("
                                     + e.at("refused_on_purpose").get<std::string>() + ") but read");
            continue;
        }
        if (status == "refused") {
            if (o.accepted)
                t.failures.push_back(where + ": CPython refuses it (" + e.at("error").get<std::string>()
                                     + ") but the machine reads it as " + o.rendered.dump().substr(0, 300));
            else
                ++t.refusedAlike;
            continue;
        }
        if (!o.accepted) {
            t.failures.push_back(where + ": CPython reads it but the machine refuses it: " + o.error);
            continue;
        }
        if (!e.contains("json")) { // a test suite's case compared by verdict only ("no_value" says why)
            ++t.acceptedAlike;
            continue;
        }
        ++t.compared;
        const json expected = readJsonFile(dataDir() + "/" + e.at("json").get<std::string>());
        if (o.rendered != expected) {
            const json patch = json::diff(expected, o.rendered);
            t.failures.push_back(where + ": values differ, first at " + patch[0].value("path", std::string("?"))
                                 + "\n  CPython: " + expected.dump().substr(0, 300) + "\n  machine: "
                                 + o.rendered.dump().substr(0, 300) + "\n  diff: " + patch.dump().substr(0, 400));
        }
        for (const std::string& p : o.problems)
            t.failures.push_back(where + ": " + p);
    }
    return t;
}

void report(const Tally& t, const char* family)
{
    qInfo("%s: %d values compared, %d refused alike, %d read on purpose, %d refused on purpose, %zu differences", family,
          t.compared, t.refusedAlike, t.supersets, t.onPurpose, t.failures.size());
    for (std::size_t i = 0; i < std::min<std::size_t>(t.failures.size(), 40); ++i)
        qWarning("%s", t.failures[i].c_str());
}

} // namespace

class TestPickleParity : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!std::ifstream(dataDir() + "/manifest.json"))
            QFAIL(qPrintable("no " + QString::fromStdString(dataDir()) + "/manifest.json: run the fixtures.pickle_parity test first"));
    }

    // pickle.dumps of random values in every protocol, plain and through pickletools.optimize.
    void randomValues()
    {
        const Tally t = compareFamily("random-");
        report(t, "random values");
        QVERIFY(t.compared >= 1000);
        QVERIFY(t.failures.empty());
    }

    // Every opcode by hand, the text numbers' edges, what CPython calls on non-containers.
    void handMadeOpcodes()
    {
        const Tally t = compareFamily("hand-");
        report(t, "hand-made streams");
        QVERIFY(t.compared >= 200);
        QVERIFY(t.refusedAlike >= 150);
        QVERIFY(t.supersets >= 5);
        QVERIFY(t.failures.empty());
    }

    // Byte-level mutations of the fuzz corpus's seeds and of the pickles above: the differential
    // campaign's family (tests/fuzz/differential_cpython.sh runs it round after round).
    void mutants()
    {
        const Tally t = compareFamily("mutant-");
        report(t, "mutants");
        QVERIFY(t.refusedAlike >= 500);
        QVERIFY(t.failures.empty());
    }

    // CPython's own test pickles (Lib/test/pickletester.py, pickle_suite_cpython.py): the same
    // value or the same refusal, like every other family.
    void cpythonSuiteValues()
    {
        const Tally t = compareFamily("cpython-");
        report(t, "CPython's test pickles");
        QVERIFY(t.compared >= 30);
        QVERIFY(t.refusedAlike >= 180);
        QVERIFY(t.failures.empty());
    }

    // The verdict a security reviewer scripts against: `ckpt imports` on each of CPython's test
    // pickles answers the exit code the manifest gives (2 for what CPython refuses, 0 for what it
    // reads, 1 where the case says why the report flags it), for the reason it says.
    void cpythonSuiteExitCodes()
    {
        int checked = 0;
        std::vector<std::string> failures;
        for (const json& e : readJsonFile(dataDir() + "/manifest.json")) {
            const std::string name = e.at("name");
            if (!name.starts_with("cpython-"))
                continue;
            const std::string file = dataDir() + "/" + e.at("file").get<std::string>();
            const testsupport::CkptRun r = testsupport::runCkpt({QStringLiteral("imports"), QString::fromStdString(file)});
            const int expected = e.at("exit");
            ++checked;
            if (r.code != expected)
                failures.push_back(name + " (" + file + "): exit " + std::to_string(r.code) + ", expected "
                                   + std::to_string(expected) + " [" + e.value("error", std::string("CPython reads it"))
                                   + "]\n  " + r.err.trimmed().toStdString() + r.out.right(300).toStdString());
            else if (expected == 2 && !r.err.contains(file.c_str()))
                failures.push_back(name + ": exit 2 without a line naming the file on stderr: " + r.err.toStdString());
        }
        qInfo("CPython's test pickles: %d verdicts checked, %zu differ", checked, failures.size());
        for (const std::string& f : failures)
            qWarning("%s", f.c_str());
        QVERIFY(checked >= 240);
        QVERIFY(failures.empty());
    }

    // Random opcode streams: mostly refused by CPython, and then by the machine too.
    void randomOpcodeStreams()
    {
        const Tally t = compareFamily("opstream-");
        report(t, "random opcode streams");
        QVERIFY(t.compared >= 300);
        QVERIFY(t.refusedAlike >= 1000);
        QVERIFY(t.failures.empty());
    }

    // The machine's graph keeps what CPython would write into objects it cannot see into.
    void writesIntoGlobalsAreKept()
    {
        ValueGraph g;
        PickleMachine vm(g);
        // GLOBAL sys path; APPEND 'x'; DUP; SETITEM 1 2; DUP; MARK 3 ADDITEMS; BUILD {} ; BUILD {'a': 1}
        using namespace std::string_literals;
        const std::string p = "csys\npath\nX\x01\x00\x00\x00" "xa2K\x01K\x02s0(K\x03\x90}b}X\x01\x00\x00\x00" "aK\x01sb."s;
        const PickleRun run = vm.run(Bytes(reinterpret_cast<const std::byte*>(p.data()), p.size()));
        const Node& n = g[run.root];
        QCOMPARE(n.kind, Kind::Global);
        QCOMPARE(n.ref, kListItems | kDictItems | kSetItems);
        QCOMPARE(n.items.size(), std::size_t(4));
        QVERIFY(g.valid(n.state));
        QCOMPARE(g[n.state].kind, Kind::Tuple);
        QCOMPARE(g[n.state].ref, kBuildStates);
        QCOMPARE(g[n.state].items.size(), std::size_t(2));
    }
};

QTEST_GUILESS_MAIN(TestPickleParity)
#include "tst_pickle_parity.moc"
