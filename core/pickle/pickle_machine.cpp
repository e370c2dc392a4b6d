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
using detail::isUtf8;
using detail::parseMemoIndex;
using detail::isInert;
using detail::isUnhashable;
using detail::requireHashable;
using detail::byteValue;
using detail::itemIndex;
using detail::build;
using detail::showThroughViews;
using detail::checkNewObj;

std::string hexByte(uint8_t b)
{
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

// Where the second read of the opcode `op` at `opAt` starts (the first starts after the opcode):
// the data after a length, the second line of GLOBAL and INST. Past the end when there is none.
std::size_t secondRead(Bytes data, uint8_t op, std::size_t opAt)
{
    switch (op) {
    case 'U': case 'C': case 0x8C: case 0x8A: return opAt + 2;
    case 'T': case 'X': case 'B': case 0x8B: return opAt + 5;
    case 0x8D: case 0x8E: case 0x96: return opAt + 9;
    case 'c':
    case 'i': {
        const std::string_view rest = asText(data.subspan(opAt + 1));
        const auto nl = rest.find('\n');
        return nl == std::string_view::npos ? static_cast<std::size_t>(-1) : opAt + 1 + nl + 1;
    }
    default: return static_cast<std::size_t>(-1);
    }
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
    // FRAME. CPython's C unpickler reads a frame's bytes into its buffer at once. Reading from a
    // file (pickle.Unpickler over io.BytesIO, as torch.load reads a data.pkl), a read that starts
    // inside the frame and runs past its end drops the frame's remaining bytes and reads on after
    // it; reading from bytes (pickle.loads) or a stream with peek() it just reads on; pickle.py
    // refuses it. No pickler writes one, and no one reading of it is right for every loader, so
    // it is refused (what the imports report saw before it is kept). A read that starts right at
    // the frame's end reads alike everywhere, and a FRAME inside a frame only checks that its
    // bytes are there.
    constexpr std::size_t kNoFrame = static_cast<std::size_t>(-1);
    std::size_t frameEnd = kNoFrame;
    // Throws when the frame ends strictly inside one of the reads of the opcode at `opAt`, which
    // ended at `end`: its reads start at opAt + 1 and, for `op`, at `second`.
    auto checkFrame = [&](std::size_t opAt, std::size_t end, std::size_t second) {
        if (frameEnd == kNoFrame || frameEnd <= opAt + 1 || frameEnd >= end || frameEnd == second)
            return;
        throw FormatError("pickle opcode" + at(opAt) + " reads past the end of its FRAME (offset "
                          + std::to_string(frameEnd) + "): CPython reads such a pickle one way from a file "
                          "(torch.load) and another from bytes (pickle.loads), so it is refused");
    };
    int highestProtocol = 0;
    ByteReader in(data, start);
    while (true) {
        if (frameEnd != kNoFrame && in.pos() >= frameEnd)
            frameEnd = kNoFrame;
        if (in.atEnd())
            throw FormatError("truncated pickle: no STOP opcode before the end of the data (offset "
                              + std::to_string(in.pos()) + ")");
        const std::size_t opAt = in.pos();
        m_opAt = opAt;
        const uint8_t op = in.u8();
        if (op == 0x80) { // PROTO: m_protocol is the current one (GLOBAL's Python 2 names follow it)
            step(in, op, opAt);
            checkFrame(opAt, in.pos(), kNoFrame);
            highestProtocol = std::max(highestProtocol, m_protocol);
            continue;
        }
        if (op == 0x95) { // FRAME: the frame's bytes are read (and checked) as a second read
            const uint64_t length = in.u64();
            checkFrame(opAt, in.pos(), kNoFrame);
            in.require(length);
            if (frameEnd != kNoFrame && in.pos() < frameEnd) {
                if (length > frameEnd - in.pos())
                    checkFrame(opAt, in.pos() + static_cast<std::size_t>(length), in.pos());
            } else if (length > 0) {
                frameEnd = in.pos() + static_cast<std::size_t>(length);
            }
            continue;
        }
        if (op != '.') {
            step(in, op, opAt);
            if (frameEnd != kNoFrame && frameEnd < in.pos())
                checkFrame(opAt, in.pos(), secondRead(data, op, opAt));
            continue;
        }
        if (m_stack.empty())
            throw FormatError("pickle STOP with an empty stack" + at(opAt));
        if (!m_marks.empty() && m_stack.size() <= m_marks.back()) // CPython: "unexpected MARK found"
            throw FormatError("pickle STOP with no value above the last MARK" + at(opAt));
        checkGetattrEscapes();
        PickleRun result;
        result.root = m_stack.back();
        result.end = in.pos();
        result.protocol = highestProtocol;
        return result;
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

// APPEND / APPENDS, as CPython's do_append: nothing to add changes nothing; a list is extended;
// anything else gets its `extend` (or `append`) called: a bytearray takes bytes, builtin values
// have neither, and an object the machine cannot see into keeps the values (ref kListItems).
void PickleMachine::appendTo(NodeId target, const std::vector<NodeId>& values, std::size_t offset)
{
    if (values.empty())
        return;
    const Kind kind = m_graph[target].kind;
    if (kind == Kind::List) {
        Node& t = m_graph[target];
        t.items.insert(t.items.end(), values.begin(), values.end());
    } else if (kind == Kind::ByteArray) {
        std::string bytes;
        for (NodeId v : values)
            bytes += byteValue(m_graph, v, offset);
        m_graph[target].text += bytes;
        showThroughViews(m_graph, target);
    } else if (isInert(kind)) {
        throw FormatError(std::string("pickle appends to a ") + kindName(kind)
                          + ", which is not a list (it has no extend or append)" + at(offset));
    } else { // a list subclass rebuilt by copyreg, or a module-level object reached by GLOBAL
        Node& t = m_graph[target];
        t.ref |= kListItems;
        t.items.insert(t.items.end(), values.begin(), values.end());
    }
}

// SETITEM / SETITEMS, as CPython's do_setitems: target[key] = value for each pair in turn.
void PickleMachine::setItemsOn(NodeId target, const std::vector<NodeId>& kv, std::size_t offset)
{
    if (kv.empty())
        return;
    if (kv.size() % 2 != 0)
        throw FormatError("pickle SETITEMS has an odd number of values" + at(offset));
    const Kind kind = m_graph[target].kind;
    if (kind == Kind::Dict) {
        for (std::size_t i = 0; i < kv.size(); i += 2)
            requireHashable(m_graph, kv[i], "a dict key", offset);
        Node& t = m_graph[target];
        t.items.insert(t.items.end(), kv.begin(), kv.end());
    } else if (kind == Kind::List) {
        for (std::size_t i = 0; i < kv.size(); i += 2) {
            const std::size_t index = itemIndex(m_graph, kv[i], m_graph[target].items.size(), offset);
            m_graph[target].items[index] = kv[i + 1];
        }
    } else if (kind == Kind::ByteArray) {
        for (std::size_t i = 0; i < kv.size(); i += 2) {
            const std::size_t index = itemIndex(m_graph, kv[i], m_graph[target].text.size(), offset);
            m_graph[target].text[index] = byteValue(m_graph, kv[i + 1], offset);
        }
        showThroughViews(m_graph, target);
    } else if (isInert(kind)) {
        throw FormatError(std::string("pickle sets items on a ") + kindName(kind)
                          + ", which is not a dict (it has no __setitem__)" + at(offset));
    } else { // OrderedDict(), defaultdict(f), dict subclasses; a module's or class's object
        Node& t = m_graph[target];
        t.ref |= kDictItems;
        t.items.insert(t.items.end(), kv.begin(), kv.end());
    }
}

void PickleMachine::step(ByteReader& in, uint8_t op, std::size_t opAt)
{
    auto tupleOf = [&](std::vector<NodeId> items) {
        Node n{.kind = Kind::Tuple};
        n.flag = std::any_of(items.begin(), items.end(), [&](NodeId i) { return isUnhashable(m_graph, i); });
        n.items = std::move(items);
        return m_graph.add(std::move(n));
    };
    auto textNode = [&](Kind kind, Bytes b) { return makeText(kind, std::string(asText(b))); };
    // BINUNICODE and friends: UTF-8, decoded with "surrogatepass" (a lone surrogate is kept).
    auto unicodeNode = [&](Bytes b) {
        if (!isUtf8(asText(b), true))
            throw FormatError("pickle BINUNICODE string is not UTF-8" + at(opAt));
        return makeText(Kind::String, std::string(asText(b)));
    };

    switch (op) {
    case 0x80: { // PROTO, anywhere in the stream: CPython keeps the last one (self->proto)
        const int proto = in.u8();
        if (proto > 5)
            throw FormatError("unsupported pickle protocol " + std::to_string(proto) + at(opAt));
        m_protocol = proto;
        return;
    }
    case 0x95: // FRAME: run() keeps the frame's window; here only its bytes are checked
        in.require(in.u64());
        return;
    case '(': // MARK
        if (m_marks.size() >= m_limits.maxMarks)
            throw LimitError("pickle nests more than " + std::to_string(m_limits.maxMarks) + " MARKs (limit exceeded)");
        m_marks.push_back(m_stack.size());
        return;
    case '0': // POP: CPython's load_pop drops a MARK set at the top of the stack instead of a value
        if (!m_marks.empty() && m_marks.back() == m_stack.size()) {
            m_marks.pop_back();
            return;
        }
        pop();
        return;
    case '1': popMark(); return; // POP_MARK
    case '2': push(top()); return; // DUP

    // --- constants
    case 'N': push(m_graph.add(Kind::None)); return;
    case 0x88: push(m_graph.add(Node{.kind = Kind::Bool, .flag = true})); return;
    case 0x89: push(m_graph.add(Node{.kind = Kind::Bool, .flag = false})); return;
    case 'I': { // INT (protocol 0): "01"/"00" are Python 2's True/False; C strtol's syntax first
        const detail::TextInt v = detail::parseIntOperand(in.line(), opAt, m_limits.maxLongBytes);
        if (v.isBool)
            push(m_graph.add(Node{.kind = Kind::Bool, .flag = v.value == 1}));
        else
            push(v.fits ? m_graph.addInt(v.value) : makeText(Kind::BigInt, v.decimal));
        return;
    }
    case 'L': { // LONG (protocol 0): Python's int() syntax with an optional trailing L
        const detail::TextInt v = detail::parseLongOperand(in.line(), opAt, m_limits.maxLongBytes);
        push(v.fits ? m_graph.addInt(v.value) : makeText(Kind::BigInt, v.decimal));
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
    case 'F': // FLOAT (protocol 0)
        push(m_graph.add(Node{.kind = Kind::Float, .f = detail::parseFloatOperand(in.line(), opAt)}));
        return;
    case 'G': push(m_graph.add(Node{.kind = Kind::Float, .f = in.f64be()})); return;

    // --- strings and bytes (every length is checked against what remains by take())
    case 'S': push(makeText(Kind::String, decodeStringRepr(in.line(), opAt))); return;
    // Python 2 strings (STRING, BINSTRING, SHORT_BINSTRING) keep their bytes: CPython decodes them
    // with the Unpickler's encoding (ASCII for pickle.loads, UTF-8 for torch.load, latin-1 or bytes
    // by choice), so no one decoding is right; nothing is refused for it.
    case 'T': push(textNode(Kind::String, in.take(in.u32()))); return; // the length is unsigned in CPython
    case 'U': push(textNode(Kind::String, in.take(in.u8()))); return;
    case 'V': push(makeText(Kind::String, decodeRawUnicodeEscape(in.line(), opAt))); return;
    case 'X': push(unicodeNode(in.take(in.u32()))); return;
    case 0x8C: push(unicodeNode(in.take(in.u8()))); return;
    case 0x8D: push(unicodeNode(in.take(in.u64()))); return;
    case 'B': push(textNode(Kind::Bytes, in.take(in.u32()))); return;
    case 'C': push(textNode(Kind::Bytes, in.take(in.u8()))); return;
    case 0x8E: push(textNode(Kind::Bytes, in.take(in.u64()))); return;
    case 0x96: push(textNode(Kind::ByteArray, in.take(in.u64()))); return;
    case 0x97:
        throw FormatError("pickle uses an out-of-band buffer (NEXT_BUFFER), which a file cannot carry" + at(opAt));
    case 0x98: { // READONLY_BUFFER: CPython makes a read-only memoryview of the buffer on top
        const NodeId id = top();
        const Kind kind = m_graph[id].kind;
        if (kind == Kind::ByteArray) { // a read-only memoryview: bytes that follow the bytearray's
            std::string bytes = m_graph[id].text;
            const NodeId view = makeText(Kind::Bytes, std::move(bytes));
            m_graph[view].flag = true; // hashing the view hashes the bytearray: unhashable
            m_graph[id].items.push_back(view);
            m_stack.back() = view;
        } else if (kind != Kind::Bytes && isInert(kind)) {
            throw FormatError(std::string("pickle READONLY_BUFFER on a ") + kindName(kind) + ", which is not a buffer"
                              + at(opAt));
        }
        return;
    }

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
        for (std::size_t i = 0; i < kv.size(); i += 2)
            requireHashable(m_graph, kv[i], "a dict key", opAt);
        Node n{.kind = Kind::Dict};
        n.items = std::move(kv);
        push(m_graph.add(std::move(n)));
        return;
    }
    case 's': { const NodeId v = pop(); const NodeId k = pop(); setItemsOn(top(), {k, v}, opAt); return; }
    case 'u': { auto kv = popMark(); setItemsOn(top(), kv, opAt); return; }
    case 0x8F: push(m_graph.add(Kind::Set)); return;
    case 0x90: { // ADDITEMS: set.update on a set, the object's `add` on anything else
        auto values = popMark();
        const NodeId target = top();
        if (values.empty())
            return;
        const Kind kind = m_graph[target].kind;
        if (kind == Kind::Set) {
            for (NodeId v : values)
                requireHashable(m_graph, v, "a set item", opAt);
        } else if (isInert(kind)) {
            throw FormatError(std::string("pickle ADDITEMS on a ") + kindName(kind) + ", which has no add method" + at(opAt));
        } else {
            m_graph[target].ref |= kSetItems;
        }
        Node& t = m_graph[target];
        t.items.insert(t.items.end(), values.begin(), values.end());
        return;
    }
    case 0x91: {
        Node n{.kind = Kind::FrozenSet};
        n.items = popMark();
        for (NodeId v : n.items)
            requireHashable(m_graph, v, "a frozenset item", opAt);
        push(m_graph.add(std::move(n)));
        return;
    }

    // --- memo
    case 'g': { // GET: int(s) in base 10 (signs, spaces and underscores as Python allows them)
        const int64_t index = parseMemoIndex(in.line(), opAt);
        if (index < 0)
            throw FormatError("pickle reads memo entry " + std::to_string(index) + ", which was never stored" + at(opAt));
        push(memoGet(static_cast<uint64_t>(index), opAt));
        return;
    }
    case 'h': push(memoGet(in.u8(), opAt)); return;
    case 'j': push(memoGet(in.u32(), opAt)); return;
    case 'p': { // PUT
        const int64_t index = parseMemoIndex(in.line(), opAt);
        if (index < 0)
            throw FormatError("pickle PUT with a negative memo index" + at(opAt));
        memoPut(static_cast<uint64_t>(index));
        return;
    }
    case 'q': memoPut(in.u8()); return;
    case 'r': memoPut(in.u32()); return;
    case 0x94: memoPut(m_memo.size()); return;

    // --- globals and object construction: recorded, never executed
    case 'c': {
        const std::string module(in.line());
        const std::string name(in.line());
        if (module.empty() || name.empty() || !isUtf8(module, false) || !isUtf8(name, false))
            throw FormatError("pickle GLOBAL with an empty or non-UTF-8 module or name" + at(opAt));
        push(makeGlobal(module, name, opAt, true));
        return;
    }
    case 0x93: { // STACK_GLOBAL
        const NodeId name = pop();
        const NodeId module = pop();
        const Node& m = m_graph[module];
        const Node& n = m_graph[name];
        // CPython refuses operands that are not exact str ("STACK_GLOBAL requires str"): a value
        // whose type its opcode fixes (an int, bytes, None...) is refused alike. A call's result
        // may be a str, so anything else but two string literals is kept as the global "?",
        // which the imports report cannot clear (a refusal would say less).
        for (const Node* operand : {&m, &n}) {
            if (isInert(operand->kind) && operand->kind != Kind::String)
                throw FormatError(std::string("pickle STACK_GLOBAL on a value of type ") + kindName(operand->kind)
                                  + " as module or name, where CPython requires str" + at(opAt));
        }
        const bool literal = m.kind == Kind::String && n.kind == Kind::String;
        push(makeGlobal(literal ? m.text : "?", literal ? n.text : "?", opAt, literal));
        return;
    }
    case 'i': { // INST: class from the operand, args from the mark
        const std::string module(in.line());
        const std::string name(in.line());
        const auto ascii = [](const std::string& s) {
            return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
        };
        if (module.empty() || name.empty() || !ascii(module) || !ascii(name))
            throw FormatError("pickle INST with an empty or non-ASCII module or name" + at(opAt));
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
        if (isInert(m_graph[cls].kind))
            throw FormatError(std::string("pickle OBJ instantiates a ") + kindName(m_graph[cls].kind)
                              + ", which is not callable" + at(opAt));
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
        // PyObject_CallObject: a builtin value is not callable, and the arguments must be a tuple.
        if (isInert(m_graph[callable].kind))
            throw FormatError(std::string("pickle REDUCE calls a ") + kindName(m_graph[callable].kind)
                              + ", which is not callable" + at(opAt));
        if (isInert(m_graph[args].kind) && m_graph[args].kind != Kind::Tuple)
            throw FormatError(std::string("pickle REDUCE with a ") + kindName(m_graph[args].kind)
                              + " of arguments instead of a tuple" + at(opAt));
        push(m_graph.add(Node{.kind = Kind::Call, .a = callable, .b = args}));
        return;
    }
    case 0x81: { // NEWOBJ
        const NodeId args = pop();
        const NodeId cls = pop();
        if (m_graph[cls].kind == Kind::Global)
            m_called.insert(m_graph[cls].text);
        checkNewObj(m_graph, cls, args, kNoNode, opAt);
        push(m_graph.add(Node{.kind = Kind::NewObj, .a = cls, .b = args}));
        return;
    }
    case 0x92: { // NEWOBJ_EX
        const NodeId kwargs = pop();
        const NodeId args = pop();
        const NodeId cls = pop();
        if (m_graph[cls].kind == Kind::Global)
            m_called.insert(m_graph[cls].text);
        checkNewObj(m_graph, cls, args, kwargs, opAt);
        push(m_graph.add(Node{.kind = Kind::NewObj, .a = cls, .b = args, .c = kwargs}));
        return;
    }
    case 'b': { // BUILD
        const NodeId state = pop();
        build(m_graph, top(), state, opAt);
        return;
    }
    case 'P': { // PERSID: CPython hands persistent_load an ASCII str
        const std::string_view line = in.line();
        if (std::any_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
            throw FormatError("pickle PERSID operand is not ASCII" + at(opAt));
        const NodeId pid = makeText(Kind::String, std::string(line));
        push(m_graph.add(Node{.kind = Kind::PersistentId, .a = pid}));
        return;
    }
    case 'Q': { // BINPERSID
        const NodeId pid = pop();
        push(m_graph.add(Node{.kind = Kind::PersistentId, .a = pid}));
        return;
    }
    case 0x82: // EXT1, EXT2, EXT4: copyreg's extension registry is empty unless the loading program
    case 0x83: // called copyreg.add_extension, and CPython refuses a code it does not hold
    case 0x84: {
        const int64_t code = op == 0x82 ? in.u8() : op == 0x83 ? in.u16() : in.i32();
        if (code <= 0)
            throw FormatError("pickle EXT opcode with code " + std::to_string(code) + " (codes start at 1)" + at(opAt));
        throw FormatError("pickle uses extension code " + std::to_string(code)
                          + " of copyreg's EXT registry, which is empty unless the loading program filled it "
                            "(CPython refuses an unregistered code)" + at(opAt));
    }
    default:
        throw FormatError("unknown pickle opcode " + hexByte(op) + at(opAt));
    }
}

} // namespace ckpt
