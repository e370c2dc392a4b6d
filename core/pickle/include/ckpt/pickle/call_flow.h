// SPDX-License-Identifier: MIT
// What a pickle would run, read from the inert value graph the machine built (all of it, or as far
// as a broken pickle got). Looking at opcodes one at a time misses the published scanner bypasses:
// a dangerous callable handed to an allow-listed helper that calls it (torch's
// _rebuild_from_type_v2 calls its `func`, copyreg._reconstructor its `base`), wrapped in a
// functools.partial, or an allow-listed module whose attribute a BUILD replaced. So callables are
// followed through the graph to every position where something calls them, and every write into a
// module, class or module-level object is reported.
#pragma once

#include "ckpt/pickle/value_graph.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ckpt {

/// A write into something a GLOBAL reached: BUILD on a module or class replaces its attributes,
/// APPEND / SETITEM / ADDITEMS change a module-level list, dict or set (torch.serialization's
/// _package_registry, a module's __dict__). Later calls of allow-listed names then run what it put there.
struct GlobalWrite {
    std::string target;   // the global's path
    std::string how;      // "BUILD replaces its attributes", ...
};

/// Bytes handed to a function that unpickles them (torch.storage._load_from_bytes): judged by
/// what they hold, not by the function's name.
struct NestedPayload {
    std::string loader;                  // the global that unpickles them
    const std::string* literal = nullptr; // BINBYTES / BYTEARRAY8, in the graph the flow was computed from
    std::string computed;                // or built by a call: _codecs.encode(text, 'latin1') below protocol 3, bytes([...])

    std::string_view bytes() const { return literal ? std::string_view(*literal) : std::string_view(computed); }
};

struct CallFlow {
    /// Global path -> how it comes to be called (the first way found).
    std::unordered_map<std::string, std::string> called;
    std::vector<GlobalWrite> writes;
    std::vector<NestedPayload> nested;
    /// Calls of a computed callable (a call's result, a getattr's): benign checkpoints never make them.
    std::size_t indirectCalls = 0;
};

/// Follows every call the graph records (REDUCE, NEWOBJ, INST, OBJ) and the helpers known to call
/// their arguments. A callable passed to a callable that is neither such a helper nor a plain data
/// constructor counts as called too: its code runs during unpickling and may call it.
CallFlow analyseCallFlow(const ValueGraph& graph);

} // namespace ckpt
