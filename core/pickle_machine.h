// SPDX-License-Identifier: MIT
// A pickle virtual machine that never executes anything. It implements every opcode of
// protocols 0-5, but GLOBAL, REDUCE, NEWOBJ, BUILD and friends only build inert nodes in a
// ValueGraph. Hard limits bound the stack, nesting, memo and object count; every declared
// length is checked against the bytes that remain. Takes a byte span, so a fuzzer can drive it.
#pragma once

#include "core/byte_reader.h"
#include "core/value_graph.h"

#include <string>
#include <unordered_map>
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
    NodeId makeText(Kind kind, std::string text) { return m_graph.add(Node{.kind = kind, .text = std::move(text)}); }

    ValueGraph& m_graph;
    PickleLimits m_limits;
    std::vector<NodeId> m_stack;
    std::vector<std::size_t> m_marks;
    std::unordered_map<uint64_t, NodeId> m_memo;
    std::vector<PickleGlobal> m_globals;
    int m_protocol = 0;
};

/// Python 2 -> 3 renames (`__builtin__` -> `builtins`, `copy_reg` -> `copyreg`...), as
/// CPython's _compat_pickle and torch's unpickler apply them.
std::pair<std::string, std::string> mapPython2Name(std::string_view module, std::string_view name);

/// Decimal text of a little-endian two's-complement integer of any length.
std::string littleEndianToDecimal(Bytes twosComplement);

} // namespace ckpt
