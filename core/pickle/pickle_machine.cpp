// SPDX-License-Identifier: MIT
#include "ckpt/pickle/pickle_machine.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace ckpt {
namespace {

std::string at(std::size_t offset) { return " at offset " + std::to_string(offset); }

std::string hexByte(uint8_t b)
{
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

void appendUtf8(std::string& out, uint32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

uint32_t parseHex(std::string_view s, std::size_t pos, std::size_t n, std::size_t offset)
{
    if (pos + n > s.size())
        throw FormatError("truncated escape sequence in a protocol-0 string" + at(offset));
    uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int h = hexValue(s[pos + i]);
        if (h < 0)
            throw FormatError("bad hex escape in a protocol-0 string" + at(offset));
        v = v * 16 + static_cast<uint32_t>(h);
    }
    return v;
}

// STRING's operand is a Python 2 repr: quoted, with backslash escapes.
std::string decodeStringRepr(std::string_view s, std::size_t offset)
{
    if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
        throw FormatError("STRING opcode operand is not a quoted string" + at(offset));
    s = s.substr(1, s.size() - 2);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char e = s[++i];
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'x':
            out += static_cast<char>(parseHex(s, i + 1, 2, offset));
            i += 2;
            break;
        default:
            if (e >= '0' && e <= '7') {
                int v = e - '0';
                for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k)
                    v = v * 8 + (s[++i] - '0');
                out += static_cast<char>(v & 0xFF);
            } else {
                out += '\\';
                out += e;
            }
        }
    }
    return out;
}

// UNICODE's operand is raw-unicode-escape: \uXXXX and \UXXXXXXXX, other bytes are Latin-1.
std::string decodeRawUnicodeEscape(std::string_view s, std::size_t offset)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
            const std::size_t n = s[i + 1] == 'u' ? 4 : 8;
            const uint32_t cp = parseHex(s, i + 2, n, offset);
            if (cp > 0x10FFFF)
                throw FormatError("code point out of range in a UNICODE opcode" + at(offset));
            appendUtf8(out, cp);
            i += 1 + n;
        } else {
            appendUtf8(out, static_cast<uint8_t>(s[i]));
        }
    }
    return out;
}

bool isDecimal(std::string_view s)
{
    if (!s.empty() && (s.front() == '-' || s.front() == '+'))
        s.remove_prefix(1);
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

uint64_t parseIndex(std::string_view s, std::size_t offset)
{
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        throw FormatError("bad memo index '" + std::string(s.substr(0, 40)) + "'" + at(offset));
    return v;
}

struct NameMapping {
    std::string_view fromModule, fromName, toModule, toName;
};

// CPython Lib/_compat_pickle.py NAME_MAPPING (the entries that matter for checkpoints and for
// recognising dangerous calls) and IMPORT_MAPPING.
constexpr std::array kNameMappings{
    NameMapping{"__builtin__", "xrange", "builtins", "range"},
    NameMapping{"__builtin__", "reduce", "functools", "reduce"},
    NameMapping{"__builtin__", "intern", "sys", "intern"},
    NameMapping{"__builtin__", "unichr", "builtins", "chr"},
    NameMapping{"__builtin__", "unicode", "builtins", "str"},
    NameMapping{"__builtin__", "long", "builtins", "int"},
    NameMapping{"__builtin__", "basestring", "builtins", "str"},
    NameMapping{"__builtin__", "raw_input", "builtins", "input"},
    NameMapping{"__builtin__", "execfile", "builtins", "exec"},
    NameMapping{"itertools", "izip", "builtins", "zip"},
    NameMapping{"itertools", "imap", "builtins", "map"},
    NameMapping{"itertools", "ifilter", "builtins", "filter"},
    NameMapping{"UserDict", "UserDict", "collections", "UserDict"},
    NameMapping{"UserList", "UserList", "collections", "UserList"},
    NameMapping{"string", "maketrans", "bytes", "maketrans"},
};

constexpr std::array<std::pair<std::string_view, std::string_view>, 20> kImportMappings{{
    {"__builtin__", "builtins"},
    {"copy_reg", "copyreg"},
    {"Queue", "queue"},
    {"cPickle", "pickle"},
    {"_elementtree", "xml.etree.ElementTree"},
    {"exceptions", "builtins"},
    {"commands", "subprocess"},
    {"cStringIO", "io"},
    {"StringIO", "io"},
    {"thread", "_thread"},
    {"httplib", "http.client"},
    {"urllib2", "urllib.request"},
    {"urlparse", "urllib.parse"},
    {"SocketServer", "socketserver"},
    {"SimpleHTTPServer", "http.server"},
    {"BaseHTTPServer", "http.server"},
    {"cookielib", "http.cookiejar"},
    {"repr", "reprlib"},
    {"__main__", "__main__"},
    {"dbm", "dbm.ndbm"},
}};

} // namespace

std::pair<std::string, std::string> mapPython2Name(std::string_view module, std::string_view name)
{
    for (const auto& m : kNameMappings) {
        if (m.fromModule == module && m.fromName == name)
            return {std::string(m.toModule), std::string(m.toName)};
    }
    for (const auto& [from, to] : kImportMappings) {
        if (from == module)
            return {std::string(to), std::string(name)};
    }
    return {std::string(module), std::string(name)};
}

std::string littleEndianToDecimal(Bytes bytes)
{
    if (bytes.empty())
        return "0";
    std::vector<uint8_t> mag(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i)
        mag[i] = static_cast<uint8_t>(bytes[i]);
    const bool negative = (mag.back() & 0x80) != 0;
    if (negative) { // two's complement -> magnitude
        bool carry = true;
        for (auto& b : mag) {
            b = static_cast<uint8_t>(~b);
            if (carry) {
                carry = (++b == 0);
            }
        }
    }
    // Repeated division by 10^9 over the little-endian magnitude.
    std::vector<uint32_t> chunks;
    while (std::any_of(mag.begin(), mag.end(), [](uint8_t b) { return b != 0; })) {
        uint64_t rem = 0;
        for (std::size_t i = mag.size(); i-- > 0;) {
            const uint64_t cur = (rem << 8) | mag[i];
            mag[i] = static_cast<uint8_t>(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        chunks.push_back(static_cast<uint32_t>(rem));
    }
    if (chunks.empty())
        return "0";
    std::string out = negative ? "-" : "";
    out += std::to_string(chunks.back());
    for (std::size_t i = chunks.size() - 1; i-- > 0;) {
        const std::string part = std::to_string(chunks[i]);
        out += std::string(9 - part.size(), '0') + part;
    }
    return out;
}

PickleMachine::PickleMachine(ValueGraph& graph, PickleLimits limits)
    : m_graph(graph)
    , m_limits(limits)
{
    m_graph.setMaxNodes(limits.maxNodes);
}

PickleRun PickleMachine::run(Bytes data, std::size_t start)
{
    m_stack.clear();
    m_marks.clear();
    m_memo.clear();
    m_protocol = 0;
    // A pickle of many tensors builds millions of nodes: growing the graph by doubling moved
    // every node again and again, and page-faulted each new copy in. Every opcode is at least
    // a byte and builds at most one node, so a fraction of the bytes left is a fair guess;
    // capped, because `data` may run on into a legacy file's storages.
    m_graph.reserve(std::min<std::size_t>((data.size() - std::min(start, data.size())) / 4, std::size_t(1) << 21));
    ByteReader in(data, start);
    while (true) {
        if (in.atEnd())
            throw FormatError("truncated pickle: no STOP opcode before the end of the data (offset "
                              + std::to_string(in.pos()) + ")");
        const std::size_t opAt = in.pos();
        const uint8_t op = in.u8();
        if (op == '.') {
            if (m_stack.empty())
                throw FormatError("pickle STOP with an empty stack" + at(opAt));
            checkGetattrEscapes();
            PickleRun result;
            result.root = m_stack.back();
            result.end = in.pos();
            result.protocol = m_protocol;
            return result;
        }
        step(in, op, opAt);
    }
}

void PickleMachine::push(NodeId id)
{
    if (m_stack.size() >= m_limits.maxStack)
        throw LimitError("pickle stack deeper than " + std::to_string(m_limits.maxStack) + " values (limit exceeded)");
    m_stack.push_back(id);
}

NodeId PickleMachine::pop()
{
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back()))
        throw FormatError("pickle pops from an empty stack (a malformed or truncated pickle)");
    const NodeId id = m_stack.back();
    m_stack.pop_back();
    return id;
}

NodeId& PickleMachine::top()
{
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back()))
        throw FormatError("pickle reads the top of an empty stack (a malformed pickle)");
    return m_stack.back();
}

std::vector<NodeId> PickleMachine::popMark()
{
    if (m_marks.empty())
        throw FormatError("pickle uses a MARK that was never set (a malformed pickle)");
    const std::size_t mark = m_marks.back();
    m_marks.pop_back();
    std::vector<NodeId> items(m_stack.begin() + static_cast<std::ptrdiff_t>(mark), m_stack.end());
    m_stack.resize(mark);
    return items;
}

NodeId PickleMachine::makeGlobal(std::string module, std::string name, std::size_t offset, bool literal)
{
    PickleGlobal g;
    auto [m, n] = mapPython2Name(module, name);
    if (m != module || n != name)
        g.written = module + " " + name;
    g.module = std::move(m);
    g.name = std::move(n);
    g.offset = offset;
    g.literal = literal;
    const std::string path = literal ? g.module + "." + g.name : "?";
    if (m_globals.size() < m_limits.maxNodes)
        m_globals.push_back(std::move(g));
    return makeText(Kind::Global, path);
}

NodeId PickleMachine::memoGet(uint64_t key, std::size_t offset)
{
    const auto it = m_memo.find(key);
    if (it == m_memo.end())
        throw FormatError("pickle reads memo entry " + std::to_string(key) + ", which was never stored" + at(offset));
    return it->second;
}

void PickleMachine::memoPut(uint64_t key)
{
    if (m_memo.size() >= m_limits.maxMemo && !m_memo.contains(key))
        throw LimitError("pickle memo holds more than " + std::to_string(m_limits.maxMemo) + " entries (limit exceeded)");
    m_memo[key] = top();
}

void PickleMachine::appendTo(NodeId target, const std::vector<NodeId>& values, std::size_t offset)
{
    Node& t = m_graph[target];
    switch (t.kind) {
    case Kind::List:
        break;
    case Kind::Call:
    case Kind::NewObj: // a list subclass rebuilt by copyreg
        t.ref = kListItems;
        break;
    default:
        throw FormatError(std::string("pickle appends to a ") + kindName(t.kind) + ", which is not a list" + at(offset));
    }
    t.items.insert(t.items.end(), values.begin(), values.end());
}

void PickleMachine::setItemsOn(NodeId target, const std::vector<NodeId>& kv, std::size_t offset)
{
    Node& t = m_graph[target];
    switch (t.kind) {
    case Kind::Dict:
        break;
    case Kind::Call:
    case Kind::NewObj: // OrderedDict(), defaultdict(f), dict subclasses
        t.ref = kDictItems;
        break;
    default:
        throw FormatError(std::string("pickle sets items on a ") + kindName(t.kind) + ", which is not a dict" + at(offset));
    }
    if (kv.size() % 2 != 0)
        throw FormatError("pickle SETITEMS has an odd number of values" + at(offset));
    t.items.insert(t.items.end(), kv.begin(), kv.end());
}

// getattr is judged by its REDUCE calls only if it never went anywhere else (into a
// partial, a list, another call's arguments) from where it could be called unseen.
void PickleMachine::checkGetattrEscapes()
{
    if (m_getattrs.empty())
        return;
    auto isGetattr = [&](NodeId id) {
        return m_graph.valid(id) && m_graph[id].kind == Kind::Global && m_graph[id].text == "builtins.getattr";
    };
    for (std::size_t i = 0; i < m_graph.size(); ++i) {
        const Node& n = m_graph[static_cast<NodeId>(i)];
        bool escaped = isGetattr(n.b) || isGetattr(n.c) || isGetattr(n.state) || (n.kind != Kind::Call && isGetattr(n.a));
        for (NodeId item : n.items)
            escaped = escaped || isGetattr(item);
        if (escaped) {
            GetattrUse use;
            use.target = "(passed on as a value)";
            m_getattrs.push_back(std::move(use));
            return;
        }
    }
}

void PickleMachine::recordGetattr(NodeId args, std::size_t offset)
{
    GetattrUse use;
    use.offset = offset;
    const Node& a = m_graph[args];
    if (a.kind == Kind::Tuple && a.items.size() >= 2) {
        const Node& target = m_graph[a.items[0]];
        const Node& name = m_graph[a.items[1]];
        if (target.kind == Kind::Global) {
            use.target = target.text;
            use.targetIsGlobal = true;
        } else if (target.kind == Kind::Call || target.kind == Kind::NewObj) {
            const NodeId cls = target.a;
            use.target = m_graph.valid(cls) && m_graph[cls].kind == Kind::Global ? m_graph[cls].text : "?";
            use.targetIsObject = true;
        }
        if (name.kind == Kind::String)
            use.attribute = name.text;
    }
    if (m_getattrs.size() < 100000)
        m_getattrs.push_back(std::move(use));
}

NodeId PickleMachine::makeLong(Bytes b)
{
    if (b.size() <= 8) {
        uint64_t u = 0;
        for (std::size_t i = 0; i < b.size(); ++i)
            u |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
        const bool negative = !b.empty() && (static_cast<uint8_t>(b.back()) & 0x80);
        if (negative && b.size() < 8)
            u |= ~uint64_t(0) << (8 * b.size());
        // A positive 8-byte payload with the top bit clear fits int64; top bit set means it is
        // negative in two's complement, which also fits.
        if (b.size() < 8 || negative || (u >> 63) == 0)
            return m_graph.addInt(static_cast<int64_t>(u));
    }
    if (b.size() > m_limits.maxLongBytes)
        throw LimitError("pickle integer of " + std::to_string(b.size()) + " bytes exceeds the "
                         + std::to_string(m_limits.maxLongBytes) + "-byte limit (limit exceeded)");
    return makeText(Kind::BigInt, littleEndianToDecimal(b));
}

void PickleMachine::step(ByteReader& in, uint8_t op, std::size_t opAt)
{
    auto tupleOf = [&](std::vector<NodeId> items) {
        Node n{.kind = Kind::Tuple};
        n.items = std::move(items);
        return m_graph.add(std::move(n));
    };
    auto textNode = [&](Kind kind, Bytes b) { return makeText(kind, std::string(asText(b))); };

    switch (op) {
    case 0x80: { // PROTO
        const int proto = in.u8();
        if (proto > 5)
            throw FormatError("unsupported pickle protocol " + std::to_string(proto) + at(opAt));
        m_protocol = std::max(m_protocol, proto);
        return;
    }
    case 0x95: // FRAME: a framing hint; only check that the frame fits
        in.require(in.u64());
        return;
    case '(': // MARK
        if (m_marks.size() >= m_limits.maxMarks)
            throw LimitError("pickle nests more than " + std::to_string(m_limits.maxMarks) + " MARKs (limit exceeded)");
        m_marks.push_back(m_stack.size());
        return;
    case '0': pop(); return; // POP
    case '1': popMark(); return; // POP_MARK
    case '2': push(top()); return; // DUP

    // --- constants
    case 'N': push(m_graph.add(Kind::None)); return;
    case 0x88: push(m_graph.add(Node{.kind = Kind::Bool, .flag = true})); return;
    case 0x89: push(m_graph.add(Node{.kind = Kind::Bool, .flag = false})); return;
    case 'I': { // INT (protocol 0): "01"/"00" are Python 2's True/False
        const std::string_view s = in.line();
        if (s == "01" || s == "00") {
            push(m_graph.add(Node{.kind = Kind::Bool, .flag = s == "01"}));
            return;
        }
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && p == s.data() + s.size()) {
            push(m_graph.addInt(v));
        } else if (isDecimal(s)) {
            push(makeText(Kind::BigInt, std::string(s)));
        } else {
            throw FormatError("INT opcode operand '" + std::string(s.substr(0, 40)) + "' is not a number" + at(opAt));
        }
        return;
    }
    case 'L': { // LONG (protocol 0): decimal with an optional trailing L
        std::string_view s = in.line();
        if (!s.empty() && s.back() == 'L')
            s.remove_suffix(1);
        if (!isDecimal(s))
            throw FormatError("LONG opcode operand is not a number" + at(opAt));
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(s.data() + (s.front() == '+'), s.data() + s.size(), v);
        if (ec == std::errc() && p == s.data() + s.size())
            push(m_graph.addInt(v));
        else
            push(makeText(Kind::BigInt, std::string(s)));
        return;
    }
    case 'J': push(m_graph.addInt(in.i32())); return;
    case 'K': push(m_graph.addInt(in.u8())); return;
    case 'M': push(m_graph.addInt(in.u16())); return;
    case 0x8A: { // LONG1
        const uint8_t n = in.u8();
        push(makeLong(in.take(n)));
        return;
    }
    case 0x8B: { // LONG4
        const int32_t n = in.i32();
        if (n < 0)
            throw FormatError("LONG4 with a negative length" + at(opAt));
        in.require(static_cast<uint64_t>(n));
        if (static_cast<std::size_t>(n) > m_limits.maxLongBytes)
            throw LimitError("pickle integer of " + std::to_string(n) + " bytes exceeds the "
                             + std::to_string(m_limits.maxLongBytes) + "-byte limit (limit exceeded)" + at(opAt));
        push(makeLong(in.take(static_cast<uint64_t>(n))));
        return;
    }
    case 'F': { // FLOAT (protocol 0)
        const std::string_view s = in.line();
        double v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() && ec != std::errc::result_out_of_range)
            throw FormatError("FLOAT opcode operand '" + std::string(s.substr(0, 40)) + "' is not a number" + at(opAt));
        (void)p;
        push(m_graph.add(Node{.kind = Kind::Float, .f = v}));
        return;
    }
    case 'G': push(m_graph.add(Node{.kind = Kind::Float, .f = in.f64be()})); return;

    // --- strings and bytes (every length is checked against what remains by take())
    case 'S': push(makeText(Kind::String, decodeStringRepr(in.line(), opAt))); return;
    case 'T': {
        const int32_t n = in.i32();
        if (n < 0)
            throw FormatError("BINSTRING with a negative length" + at(opAt));
        push(textNode(Kind::String, in.take(static_cast<uint64_t>(n))));
        return;
    }
    case 'U': push(textNode(Kind::String, in.take(in.u8()))); return;
    case 'V': push(makeText(Kind::String, decodeRawUnicodeEscape(in.line(), opAt))); return;
    case 'X': push(textNode(Kind::String, in.take(in.u32()))); return;
    case 0x8C: push(textNode(Kind::String, in.take(in.u8()))); return;
    case 0x8D: push(textNode(Kind::String, in.take(in.u64()))); return;
    case 'B': push(textNode(Kind::Bytes, in.take(in.u32()))); return;
    case 'C': push(textNode(Kind::Bytes, in.take(in.u8()))); return;
    case 0x8E: push(textNode(Kind::Bytes, in.take(in.u64()))); return;
    case 0x96: push(textNode(Kind::ByteArray, in.take(in.u64()))); return;
    case 0x97:
        throw FormatError("pickle uses an out-of-band buffer (NEXT_BUFFER), which a file cannot carry" + at(opAt));
    case 0x98: return; // READONLY_BUFFER: a flag on the buffer on top; nothing to do

    // --- containers
    case ')': push(tupleOf({})); return;
    case 't': push(tupleOf(popMark())); return;
    case 0x85: { auto a = pop(); push(tupleOf({a})); return; }
    case 0x86: { auto b = pop(); auto a = pop(); push(tupleOf({a, b})); return; }
    case 0x87: { auto c = pop(); auto b = pop(); auto a = pop(); push(tupleOf({a, b, c})); return; }
    case ']': push(m_graph.add(Kind::List)); return;
    case 'l': {
        Node n{.kind = Kind::List};
        n.items = popMark();
        push(m_graph.add(std::move(n)));
        return;
    }
    case 'a': { const NodeId v = pop(); appendTo(top(), {v}, opAt); return; }
    case 'e': { auto values = popMark(); appendTo(top(), values, opAt); return; }
    case '}': push(m_graph.add(Kind::Dict)); return;
    case 'd': {
        auto kv = popMark();
        if (kv.size() % 2 != 0)
            throw FormatError("pickle DICT has an odd number of values" + at(opAt));
        Node n{.kind = Kind::Dict};
        n.items = std::move(kv);
        push(m_graph.add(std::move(n)));
        return;
    }
    case 's': { const NodeId v = pop(); const NodeId k = pop(); setItemsOn(top(), {k, v}, opAt); return; }
    case 'u': { auto kv = popMark(); setItemsOn(top(), kv, opAt); return; }
    case 0x8F: push(m_graph.add(Kind::Set)); return;
    case 0x90: { // ADDITEMS
        auto values = popMark();
        Node& t = m_graph[top()];
        if (t.kind != Kind::Set)
            throw FormatError(std::string("pickle ADDITEMS on a ") + kindName(t.kind) + at(opAt));
        t.items.insert(t.items.end(), values.begin(), values.end());
        return;
    }
    case 0x91: {
        Node n{.kind = Kind::FrozenSet};
        n.items = popMark();
        push(m_graph.add(std::move(n)));
        return;
    }

    // --- memo
    case 'g': push(memoGet(parseIndex(in.line(), opAt), opAt)); return;
    case 'h': push(memoGet(in.u8(), opAt)); return;
    case 'j': push(memoGet(in.u32(), opAt)); return;
    case 'p': memoPut(parseIndex(in.line(), opAt)); return;
    case 'q': memoPut(in.u8()); return;
    case 'r': memoPut(in.u32()); return;
    case 0x94: memoPut(m_memo.size()); return;

    // --- globals and object construction: recorded, never executed
    case 'c': {
        const std::string module(in.line());
        const std::string name(in.line());
        push(makeGlobal(module, name, opAt, true));
        return;
    }
    case 0x93: { // STACK_GLOBAL
        const NodeId name = pop();
        const NodeId module = pop();
        const Node& m = m_graph[module];
        const Node& n = m_graph[name];
        const bool literal = m.kind == Kind::String && n.kind == Kind::String;
        push(makeGlobal(literal ? m.text : "?", literal ? n.text : "?", opAt, literal));
        return;
    }
    case 'i': { // INST: class from the operand, args from the mark
        const std::string module(in.line());
        const std::string name(in.line());
        const NodeId cls = makeGlobal(module, name, opAt, true);
        m_called.insert(m_graph[cls].text);
        const NodeId args = tupleOf(popMark());
        push(m_graph.add(Node{.kind = Kind::NewObj, .a = cls, .b = args}));
        return;
    }
    case 'o': { // OBJ: class and args from the mark
        auto items = popMark();
        if (items.empty())
            throw FormatError("pickle OBJ without a class" + at(opAt));
        const NodeId cls = items.front();
        items.erase(items.begin());
        m_called.insert(m_graph[cls].kind == Kind::Global ? m_graph[cls].text : "?");
        const NodeId args = tupleOf(std::move(items));
        push(m_graph.add(Node{.kind = Kind::NewObj, .a = cls, .b = args}));
        return;
    }
    case 'R': { // REDUCE
        const NodeId args = pop();
        const NodeId callable = pop();
        if (m_graph[callable].kind == Kind::Global && m_graph[callable].text == "builtins.getattr")
            recordGetattr(args, opAt);
        if (m_graph[callable].kind != Kind::Global)
            ++m_indirectCalls;
        else
            m_called.insert(m_graph[callable].text);
        push(m_graph.add(Node{.kind = Kind::Call, .a = callable, .b = args}));
        return;
    }
    case 0x81: { // NEWOBJ
        const NodeId args = pop();
        const NodeId cls = pop();
        if (m_graph[cls].kind == Kind::Global)
            m_called.insert(m_graph[cls].text);
        push(m_graph.add(Node{.kind = Kind::NewObj, .a = cls, .b = args}));
        return;
    }
    case 0x92: { // NEWOBJ_EX
        const NodeId kwargs = pop();
        const NodeId args = pop();
        const NodeId cls = pop();
        if (m_graph[cls].kind == Kind::Global)
            m_called.insert(m_graph[cls].text);
        push(m_graph.add(Node{.kind = Kind::NewObj, .a = cls, .b = args, .c = kwargs}));
        return;
    }
    case 'b': { // BUILD
        const NodeId state = pop();
        m_graph[top()].state = state;
        return;
    }
    case 'P': { // PERSID
        const NodeId pid = makeText(Kind::String, std::string(in.line()));
        push(m_graph.add(Node{.kind = Kind::PersistentId, .a = pid}));
        return;
    }
    case 'Q': { // BINPERSID
        const NodeId pid = pop();
        push(m_graph.add(Node{.kind = Kind::PersistentId, .a = pid}));
        return;
    }
    case 0x82:
    case 0x83:
    case 0x84:
        throw FormatError("pickle uses the copyreg extension registry (EXT opcodes), which no checkpoint writer does"
                          + at(opAt));
    default:
        throw FormatError("unknown pickle opcode " + hexByte(op) + at(opAt));
    }
}

} // namespace ckpt
