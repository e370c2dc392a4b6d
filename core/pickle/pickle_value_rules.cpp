// SPDX-License-Identifier: MIT
// What CPython's unpickler checks when an opcode writes into a value or builds an object: the
// values whose type the opcode fixes, hashability, bytearray items, list indices, BUILD states and
// NEWOBJ's argument types. The machine (pickle_machine.cpp) applies them; writes into objects it
// cannot see into are kept, never refused.
#include "pickle_machine_impl.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace ckpt::detail {

// A value whose Python type its opcode fixes (an exact int, str, tuple, list, dict...): what
// CPython would do with it is known here. Globals, call results and persistent ids are objects
// the machine cannot see into; an operation on them is recorded, never refused.
bool isInert(Kind kind)
{
    switch (kind) {
    case Kind::None:
    case Kind::Bool:
    case Kind::Int:
    case Kind::BigInt:
    case Kind::Float:
    case Kind::Complex:
    case Kind::String:
    case Kind::Bytes:
    case Kind::ByteArray:
    case Kind::Tuple:
    case Kind::List:
    case Kind::Dict:
    case Kind::Set:
    case Kind::FrozenSet:
    case Kind::Slice:
        return true;
    default:
        return false;
    }
}

// hash() raises TypeError: a list, dict, set or bytearray, or a tuple holding one (marked by
// tupleOf when it was made). Objects the machine cannot see into may well be hashable.
bool isUnhashable(const ValueGraph& graph, NodeId id)
{
    const Node& n = graph[id];
    switch (n.kind) {
    case Kind::List:
    case Kind::Dict:
    case Kind::Set:
    case Kind::ByteArray:
    case Kind::Slice:
        return true;
    case Kind::Tuple:
        return n.flag;
    case Kind::Bytes: // a READONLY_BUFFER view of a bytearray: memoryview's hash hashes what it views
        return n.flag;
    default:
        return false;
    }
}

void requireHashable(const ValueGraph& graph, NodeId id, const char* what, std::size_t offset)
{
    if (isUnhashable(graph, id))
        throw FormatError(std::string("pickle uses an unhashable ") + kindName(graph[id].kind) + " as " + what
                          + " (CPython raises TypeError)" + at(offset));
}

// What bytearray's extend / __setitem__ take from a value: an int in range(256).
char byteValue(const ValueGraph& graph, NodeId id, std::size_t offset)
{
    const Node& n = graph[id];
    if (n.kind == Kind::Bool)
        return static_cast<char>(n.flag ? 1 : 0);
    if (n.kind == Kind::Int && n.i >= 0 && n.i <= 255)
        return static_cast<char>(static_cast<uint8_t>(n.i));
    if (n.kind == Kind::Int || n.kind == Kind::BigInt)
        throw FormatError("pickle puts an integer outside range(0, 256) into a bytearray" + at(offset));
    if (isInert(n.kind))
        throw FormatError(std::string("pickle puts a ") + kindName(n.kind) + " into a bytearray, which takes integers" + at(offset));
    throw FormatError("pickle puts an object into a bytearray: what it becomes cannot be known without running it"
                      + at(offset));
}

// list.__setitem__'s index: an int (or bool) within the length, counted from the end when negative.
std::size_t itemIndex(const ValueGraph& graph, NodeId key, std::size_t size, std::size_t offset)
{
    const Node& k = graph[key];
    if (k.kind == Kind::Bool || k.kind == Kind::Int) {
        int64_t i = k.kind == Kind::Bool ? (k.flag ? 1 : 0) : k.i;
        if (i < 0)
            i += static_cast<int64_t>(size);
        if (i < 0 || static_cast<uint64_t>(i) >= size)
            throw FormatError("pickle assigns a list or bytearray item out of range (CPython raises IndexError)" + at(offset));
        return static_cast<std::size_t>(i);
    }
    if (k.kind == Kind::BigInt)
        throw FormatError("pickle assigns a list or bytearray item out of range (CPython raises IndexError)" + at(offset));
    if (isInert(k.kind))
        throw FormatError(std::string("pickle indexes a list or bytearray with a ") + kindName(k.kind)
                          + " (CPython raises TypeError)" + at(offset));
    throw FormatError("pickle indexes a list or bytearray with an object: which item it sets cannot be known without "
                      "running it" + at(offset));
}

// BUILD, as CPython's load_build. A builtin value has neither __setstate__ nor a __dict__ (in
// Python 3.11), so only a state that sets nothing passes: None, or (None, {}). An
// object the machine cannot see into keeps the state; when BUILD runs on it again, every state
// is kept, in order, in a Tuple marked kBuildStates (a later BUILD does not undo an earlier one).
void build(ValueGraph& graph, NodeId target, NodeId state, std::size_t offset)
{
    const Kind kind = graph[target].kind;
    if (isInert(kind)) {
        NodeId dictState = state;
        NodeId slotState = kNoNode;
        if (graph[state].kind == Kind::Tuple && graph[state].items.size() == 2) {
            dictState = graph[state].items[0];
            slotState = graph[state].items[1];
        }
        const std::string what = std::string("pickle BUILD on a ") + kindName(kind);
        if (graph[dictState].kind != Kind::None)
            throw FormatError(what + ", which has no attributes to set (CPython: no __dict__ or the state is not a dict)"
                              + at(offset));
        if (slotState != kNoNode) { // C's load_build: a pair's second item must be a dict, even None fails
            const Node& slots = graph[slotState];
            if (slots.kind == Kind::Dict && !slots.items.empty())
                throw FormatError(what + ", which has no attributes to set" + at(offset));
            if (slots.kind != Kind::Dict && isInert(slots.kind))
                throw FormatError(what + " with a slot state that is not a dict" + at(offset));
        }
        return; // nothing changes
    }
    const NodeId previous = graph[target].state;
    if (previous == kNoNode) {
        graph[target].state = state;
    } else if (graph[previous].kind == Kind::Tuple && graph[previous].ref == kBuildStates) {
        graph[previous].items.push_back(state);
    } else {
        Node all{.kind = Kind::Tuple, .ref = kBuildStates};
        all.items = {previous, state};
        const NodeId id = graph.add(std::move(all));
        graph[target].state = id;
    }
}

// A bytearray changed: the read-only memoryviews READONLY_BUFFER made of it (its items) show it.
// (CPython refuses to resize a bytearray while a view of it lives, which is not followed here: the
// view may be gone, and then CPython resizes it; a refusal would be wrong there.)
void showThroughViews(ValueGraph& graph, NodeId byteArray)
{
    for (NodeId view : graph[byteArray].items)
        graph[view].text = graph[byteArray].text;
}

// NEWOBJ / NEWOBJ_EX, as CPython's load_newobj checks them: the class must be a type, the
// arguments a tuple, the keyword arguments a dict. Builtin values are none of the first;
// objects the machine cannot see into may be anything.
// The names in Python 3.11's builtins that are not classes: `[n for n in dir(builtins) if not
// isinstance(getattr(builtins, n), type)]`, run on Debian's python3. NEWOBJ on one of them is
// refused by CPython ("NEWOBJ class argument isn't a type object", Modules/_pickle.c
// load_newobj); of other modules' names the machine cannot tell classes from functions.
bool isBuiltinNonClass(std::string_view path)
{
    static constexpr std::string_view kNames[] = {
        "Ellipsis", "False", "None", "NotImplemented", "True", "__build_class__", "__debug__", "__doc__",
        "__import__", "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "anext", "any",
        "ascii", "bin", "breakpoint", "callable", "chr", "compile", "copyright", "credits", "delattr", "dir",
        "divmod", "eval", "exec", "exit", "format", "getattr", "globals", "hasattr", "hash", "help", "hex", "id",
        "input", "isinstance", "issubclass", "iter", "len", "license", "locals", "max", "min", "next", "oct",
        "open", "ord", "pow", "print", "quit", "repr", "round", "setattr", "sorted", "sum", "vars"};
    constexpr std::string_view prefix = "builtins.";
    if (!path.starts_with(prefix))
        return false;
    const std::string_view name = path.substr(prefix.size());
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

void checkNewObj(const ValueGraph& graph, NodeId cls, NodeId args, NodeId kwargs, std::size_t offset)
{
    if (isInert(graph[cls].kind))
        throw FormatError(std::string("pickle NEWOBJ with a ") + kindName(graph[cls].kind) + " as its class" + at(offset));
    if (graph[cls].kind == Kind::Global && isBuiltinNonClass(graph[cls].text))
        throw FormatError("pickle NEWOBJ with " + graph[cls].text + ", which is not a class, as its class" + at(offset));
    if (isInert(graph[args].kind) && graph[args].kind != Kind::Tuple)
        throw FormatError(std::string("pickle NEWOBJ with a ") + kindName(graph[args].kind)
                          + " of arguments instead of a tuple" + at(offset));
    if (kwargs != kNoNode && isInert(graph[kwargs].kind) && graph[kwargs].kind != Kind::Dict)
        throw FormatError(std::string("pickle NEWOBJ_EX with a ") + kindName(graph[kwargs].kind)
                          + " of keyword arguments instead of a dict" + at(offset));
}

} // namespace ckpt::detail
