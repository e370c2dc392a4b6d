// SPDX-License-Identifier: MIT
// The machine: the run loop, stack, MARKs and memo, list and dict updates, and step()'s dispatch of
// every opcode. Operands are decoded in pickle_operands.cpp, globals recorded in pickle_globals.cpp.
#include "ckpt/pickle/pickle_machine.h"

#include "pickle_machine_impl.h"

#include <algorithm>
#include <charconv>

namespace ckpt {
namespace {

using detail::at;
using detail::decodeRawUnicodeEscape;
using detail::decodeStringRepr;
using detail::isDecimal;
using detail::parseIndex;

std::string hexByte(uint8_t b)
{
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

} // namespace

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
