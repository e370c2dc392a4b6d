// SPDX-License-Identifier: MIT
// A pickle virtual machine that never executes anything. It implements every opcode of
// protocols 0-5, but GLOBAL, REDUCE, NEWOBJ, BUILD and friends only build inert nodes in a
// ValueGraph. Hard limits bound the stack, nesting, memo and object count; every declared
// length is checked against the bytes that remain. Takes a byte span, so a fuzzer can drive it.
#pragma once

#include "ckpt/io/byte_reader.h"
#include "ckpt/pickle/value_graph.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ckpt {

struct PickleLimits {
    std::size_t maxStack = std::size_t(1) << 20;   // values on the stack at once
    std::size_t maxMarks = std::size_t(1) << 16;   // MARKs open at once (nesting of literal containers)
    std::size_t maxMemo = std::size_t(1) << 22;    // memo entries
    std::size_t maxNodes = std::size_t(1) << 22;   // objects built (about 100 bytes each)
    std::size_t maxLongBytes = std::size_t(1) << 16; // payload of one LONG1/LONG4 integer
};

/// One reference to a global (a class or function) seen in the stream, resolved or not.
struct PickleGlobal {
    std::string module;      // after Python 2 -> 3 name mapping
    std::string name;
    std::size_t offset = 0;  // opcode offset in the pickle
    bool literal = true;     // false: STACK_GLOBAL operands were not plain strings
    std::string written;     // "module name" as written, when the mapping changed it
};

/// A REDUCE of builtins.getattr, with what it reached for: enum members pickle as
/// getattr(EnumClass, 'NAME') and bound methods as getattr(obj, 'method'); an exploit reaches
/// for dunder attributes or for attributes of module objects.
struct GetattrUse {
    std::size_t offset = 0;
    std::string target;          // the Global's path, or the class path of the object
    bool targetIsGlobal = false;
    bool targetIsObject = false; // a constructed object (REDUCE / NEWOBJ result)
    std::string attribute;       // empty when not a literal string
};

struct PickleRun {
    NodeId root = kNoNode;
    std::size_t end = 0;     // offset just past STOP
    int protocol = 0;        // highest PROTO seen (0 when absent)
};

class PickleMachine {
public:
    explicit PickleMachine(ValueGraph& graph, PickleLimits limits = {});

    /// Runs from `start` to the first STOP. Throws FormatError / LimitError with the offset.
    PickleRun run(Bytes data, std::size_t start = 0);

    /// Every global referenced so far, kept even when run() threw (the imports report needs
    /// the globals a malicious pickle named before it broke).
    const std::vector<PickleGlobal>& globals() const { return m_globals; }
    const std::vector<GetattrUse>& getattrUses() const { return m_getattrs; }
    /// The graph it builds into (complete, or as far as a broken pickle got).
    const ValueGraph& graph() const { return m_graph; }
    /// REDUCEs whose callable is not a global but the result of another call: benign pickles
    /// never do this; getattr / partial gadgets must, to run what they reached.
    std::size_t indirectCalls() const { return m_indirectCalls; }
    /// Paths of the globals that were called (REDUCE) or instantiated (NEWOBJ, INST, OBJ).
    const std::unordered_set<std::string>& calledGlobals() const { return m_called; }
    /// The offset of the opcode being run: after run() threw, the one it refused.
    std::size_t opcodeOffset() const { return m_opAt; }

private:
    void step(ByteReader& in, uint8_t op, std::size_t at);
    NodeId pop();
    NodeId& top();
    void push(NodeId id);
    std::vector<NodeId> popMark();
    NodeId makeGlobal(std::string module, std::string name, std::size_t at, bool literal);
    NodeId memoGet(uint64_t key, std::size_t at);
    void memoPut(uint64_t key);
    void appendTo(NodeId target, const std::vector<NodeId>& values, std::size_t at);
    void setItemsOn(NodeId target, const std::vector<NodeId>& keyValues, std::size_t at);
    NodeId makeLong(Bytes twosComplement);
    void recordGetattr(NodeId args, std::size_t offset);
    void checkGetattrEscapes();
    NodeId makeText(Kind kind, std::string text) { return m_graph.add(Node{.kind = kind, .text = std::move(text)}); }

    ValueGraph& m_graph;
    PickleLimits m_limits;
    std::vector<NodeId> m_stack;
    std::vector<std::size_t> m_marks;
    std::unordered_map<uint64_t, NodeId> m_memo;
    std::vector<PickleGlobal> m_globals;
    std::vector<GetattrUse> m_getattrs;
    std::size_t m_indirectCalls = 0;
    std::unordered_set<std::string> m_called;
    int m_protocol = 0;
    std::size_t m_opAt = 0;
};

/// Python 2 -> 3 renames (`__builtin__` -> `builtins`, `copy_reg` -> `copyreg`...), as
/// CPython's _compat_pickle and torch's unpickler apply them.
std::pair<std::string, std::string> mapPython2Name(std::string_view module, std::string_view name);

/// Decimal text of a little-endian two's-complement integer of any length.
std::string littleEndianToDecimal(Bytes twosComplement);

} // namespace ckpt
