// SPDX-License-Identifier: MIT
// Callables followed through the value graph to the places that call them. The helpers' calling
// positions are read from their sources, at pytorch/pytorch@v2.5.0 unless said otherwise:
//  - torch/_tensor.py _rebuild_from_type_v2(func, new_type, args, state): `ret = func(*args)`, then
//    new_type's __setstate__ (or _set_obj_state) on the result;
//  - torch/_utils.py _rebuild_tensor_v2/_v3, _rebuild_parameter(_with_state), _rebuild_qtensor: the
//    backward_hooks dict becomes `tensor._backward_hooks`, whose values autograd calls;
//    _rebuild_wrapper_subclass(cls, ...) makes an instance of cls; _set_obj_state(obj, state) setattr's;
//  - CPython 3.11 Lib/copyreg.py _reconstructor(cls, base, state): `base.__new__(cls, state)` and
//    `base.__init__(obj, state)`; __newobj__(cls, *args): `cls.__new__(cls, *args)`;
//  - collections.defaultdict(factory) calls factory for every missing key; functools.partial(func, ...)
//    exists to call func later; numpy's _reconstruct(subtype, ...) makes an instance of subtype.
#include "ckpt/pickle/call_flow.h"

#include "ckpt/pickle/codec_names.h"

#include "ckpt/pickle/imports_report.h"

#include <cctype>
#include <string_view>
#include <unordered_set>

namespace ckpt {
namespace {

enum class Helper : uint8_t {
    None,
    RebuildFromType,   // func called with *args, new_type's __setstate__ runs
    Reconstructor,     // cls instantiated, base.__new__ / base.__init__ called
    NewObjHelper,      // copyreg.__newobj__(cls, *args)
    DefaultDict,       // factory called for missing keys
    Partial,           // func called whenever the partial is
    TensorHooks,       // backward_hooks' values called by autograd; position in `hooksAt`
    WrapperSubclass,   // cls instantiated
    NumpyReconstruct,  // subtype instantiated
    SetObjState,       // setattr on its first argument
    Setattr,           // builtins.setattr
    LoadFromBytes,     // unpickles its bytes argument
};

struct HelperInfo {
    Helper kind = Helper::None;
    std::size_t hooksAt = 0;
};

HelperInfo helperOf(std::string_view path)
{
    if (path == "torch._tensor._rebuild_from_type_v2" || path == "torch._tensor._rebuild_from_type")
        return {Helper::RebuildFromType};
    if (path == "copyreg._reconstructor")
        return {Helper::Reconstructor};
    if (path == "copyreg.__newobj__" || path == "copyreg.__newobj_ex__")
        return {Helper::NewObjHelper};
    if (path == "collections.defaultdict")
        return {Helper::DefaultDict};
    if (path == "functools.partial" || path == "functools.partialmethod")
        return {Helper::Partial};
    if (path == "torch._utils._rebuild_tensor_v2" || path == "torch._utils._rebuild_tensor_v3")
        return {Helper::TensorHooks, 5};
    if (path == "torch._utils._rebuild_parameter" || path == "torch._utils._rebuild_parameter_with_state")
        return {Helper::TensorHooks, 2};
    if (path == "torch._utils._rebuild_qtensor")
        return {Helper::TensorHooks, 6};
    if (path == "torch._utils._rebuild_wrapper_subclass")
        return {Helper::WrapperSubclass};
    if (path == "numpy.core.multiarray._reconstruct" || path == "numpy._core.multiarray._reconstruct")
        return {Helper::NumpyReconstruct};
    if (path == "torch._utils._set_obj_state")
        return {Helper::SetObjState};
    if (path == "builtins.setattr")
        return {Helper::Setattr};
    if (path == "torch.storage._load_from_bytes")
        return {Helper::LoadFromBytes};
    return {};
}

class Flow {
public:
    explicit Flow(const ValueGraph& graph) : m_graph(graph) {}

    CallFlow run()
    {
        for (NodeId id = 0; id < m_graph.size(); ++id) {
            const Node& n = m_graph[id];
            switch (n.kind) {
            case Kind::Call:
                if (!isGlobal(classOf(n.a)))
                    ++m_out.indirectCalls;
                callWith(classOf(n.a), argsOf(n.b, kNoNode), "called by REDUCE", 0);
                break;
            case Kind::NewObj:
                if (!isGlobal(classOf(n.a)))
                    ++m_out.indirectCalls;
                callWith(classOf(n.a), argsOf(n.b, n.c), "instantiated (NEWOBJ, INST or OBJ)", 0);
                break;
            case Kind::Global:
                recordWrites(n);
                break;
            default:
                break;
            }
        }
        return std::move(m_out);
    }

private:
    static constexpr int kMaxDepth = 12;

    bool valid(NodeId id) const { return id != kNoNode && m_graph.valid(id); }
    bool isGlobal(NodeId id) const { return valid(id) && m_graph[id].kind == Kind::Global; }

    // What is called: the node itself, or for a legacy torch.save module record, the class it
    // names. torch 0.4-1.5 saved a whole nn.Module with each class as a persistent id
    // ('module', <class>, source file, source) and NEWOBJ on it; torch/serialization.py's
    // _legacy_load persistent_load returns that class (data[0] for typename 'module').
    NodeId classOf(NodeId id) const
    {
        if (!valid(id) || m_graph[id].kind != Kind::PersistentId || !valid(m_graph[id].a))
            return id;
        const Node& pid = m_graph[m_graph[id].a];
        if (pid.kind == Kind::Tuple && pid.items.size() >= 2 && valid(pid.items[0])
            && m_graph[pid.items[0]].kind == Kind::String && m_graph[pid.items[0]].text == "module"
            && isGlobal(pid.items[1]))
            return pid.items[1];
        return id;
    }
    const std::string& globalPath(NodeId id) const { return m_graph[id].text; }

    // A call's arguments: the args tuple's items (anything else is passed as one value; CPython
    // refuses a non-tuple, but a broken pickle may still show it) and the values of NEWOBJ_EX's kwargs.
    std::vector<NodeId> argsOf(NodeId args, NodeId kwargs) const
    {
        std::vector<NodeId> out;
        if (valid(args)) {
            if (m_graph[args].kind == Kind::Tuple)
                out = m_graph[args].items;
            else
                out.push_back(args);
        }
        if (valid(kwargs)) {
            const auto& kv = m_graph[kwargs].items;
            for (std::size_t i = 1; i < kv.size(); i += 2)
                out.push_back(kv[i]);
        }
        return out;
    }

    std::vector<NodeId> tupleItems(NodeId id) const
    {
        if (valid(id) && (m_graph[id].kind == Kind::Tuple || m_graph[id].kind == Kind::List))
            return m_graph[id].items;
        return valid(id) ? std::vector<NodeId>{id} : std::vector<NodeId>{};
    }

    void mark(const std::string& path, const std::string& via) { m_out.called.emplace(path, via); }

    // Whether a global only stores its arguments (a container, a value type, a tensor rebuild):
    // the allowlist, less the helpers above, which are handled by their positions.
    bool storesArguments(const std::string& path)
    {
        const auto it = m_storesCache.find(path);
        if (it != m_storesCache.end())
            return it->second;
        const auto dot = path.rfind('.');
        std::string reason;
        const bool safe = dot != std::string::npos
            && classifyGlobal(path.substr(0, dot), path.substr(dot + 1), reason) == ImportSafety::Safe;
        m_storesCache.emplace(path, safe);
        return safe;
    }

    // `callable` is called with `args`: mark what runs, and follow the arguments the callee calls.
    void callWith(NodeId callable, const std::vector<NodeId>& args, const std::string& via, int depth)
    {
        if (!valid(callable) || depth > kMaxDepth)
            return;
        const Node& c = m_graph[callable];
        if (c.kind == Kind::Global) {
            mark(c.text, via);
            applyHelper(c.text, args, depth);
            return;
        }
        if ((c.kind == Kind::Call || c.kind == Kind::NewObj) && isGlobal(c.a)) {
            const std::string& maker = globalPath(c.a);
            if (helperOf(maker).kind == Helper::Partial) {
                // A partial pickles as partial(func) plus BUILD (func, args, kwds, dict): calling it
                // calls func with the bound arguments first.
                std::vector<NodeId> bound;
                NodeId func = kNoNode;
                const auto ctorArgs = argsOf(c.b, kNoNode);
                if (!ctorArgs.empty())
                    func = ctorArgs[0];
                const auto state = tupleItems(c.state);
                if (valid(c.state) && m_graph[c.state].kind == Kind::Tuple && !state.empty()) {
                    if (!valid(func))
                        func = state[0];
                    if (state.size() > 1)
                        bound = tupleItems(state[1]);
                } else {
                    bound.assign(ctorArgs.begin() + std::min<std::size_t>(1, ctorArgs.size()), ctorArgs.end());
                }
                bound.insert(bound.end(), args.begin(), args.end());
                callWith(func, bound, "called through functools.partial", depth + 1);
                return;
            }
            // Calling an instance runs its class's __call__.
            mark(maker, "an instance of it is called");
        }
    }

    void applyHelper(const std::string& path, const std::vector<NodeId>& args, int depth)
    {
        auto arg = [&](std::size_t i) { return i < args.size() ? args[i] : kNoNode; };
        const HelperInfo h = helperOf(path);
        switch (h.kind) {
        case Helper::RebuildFromType:
            callWith(arg(0), tupleItems(arg(2)), "called by " + path + " (its func)", depth + 1);
            callWith(arg(1), {}, "instantiated by " + path + " (its new_type's __setstate__ runs)", depth + 1);
            return;
        case Helper::Reconstructor:
            callWith(arg(0), {}, "instantiated by copyreg._reconstructor (its cls)", depth + 1);
            callWith(arg(1), {arg(2)}, "called by copyreg._reconstructor (its base: __new__ and __init__ run)", depth + 1);
            return;
        case Helper::NewObjHelper:
            callWith(arg(0), std::vector<NodeId>(args.begin() + std::min<std::size_t>(1, args.size()), args.end()),
                     "instantiated by " + path, depth + 1);
            return;
        case Helper::DefaultDict:
            callWith(arg(0), {}, "called by collections.defaultdict for every missing key (its default_factory)", depth + 1);
            return;
        case Helper::Partial:
            // Constructing the partial calls nothing yet; whoever holds it calls it (a scheduler's
            // lr_lambda), so its function counts as called.
            callWith(arg(0), std::vector<NodeId>(args.begin() + std::min<std::size_t>(1, args.size()), args.end()),
                     "wrapped in functools.partial, which exists to be called", depth + 1);
            return;
        case Helper::TensorHooks:
            callHookValues(arg(h.hooksAt), path, depth);
            return;
        case Helper::WrapperSubclass:
            callWith(arg(0), {}, "instantiated by " + path + " (its cls)", depth + 1);
            return;
        case Helper::NumpyReconstruct:
            callWith(arg(0), {}, "instantiated by " + path + " (its subtype)", depth + 1);
            return;
        case Helper::SetObjState:
        case Helper::Setattr:
            if (isGlobal(arg(0))) {
                m_out.writes.push_back({globalPath(arg(0)), "set attributes by " + path});
                for (std::size_t i = 1; i < args.size(); ++i)
                    handTo(args[i], "written into " + globalPath(arg(0)) + " by " + path + ", where later calls run it", depth + 1, 0);
            }
            return;
        case Helper::LoadFromBytes: {
            NestedPayload nested;
            nested.loader = path;
            if (bytesOf(arg(0), nested))
                m_out.nested.push_back(std::move(nested));
            else
                mark(path, "called with something other than bytes it can read, which cannot be judged");
            return;
        }
        case Helper::None:
            break;
        }
        if (storesArguments(path))
            return;
        // Anything else runs its own code with the arguments: a callable among them may be called.
        for (NodeId a : args)
            handTo(a, "handed to " + path + ", which runs its own code with it", depth + 1, 0);
    }

    // The bytes a value stands for: BINBYTES, BYTEARRAY8, or the calls picklers write for bytes
    // below protocol 3 — _codecs.encode(text, 'latin1') (CPython Lib/pickle.py save_bytes, torch's
    // Storage.__reduce__ through pickle.dump) — and bytes(...) / bytearray(...) of ints or bytes.
    bool bytesOf(NodeId id, NestedPayload& out) const
    {
        if (!valid(id))
            return false;
        const Node& n = m_graph[id];
        if (n.kind == Kind::Bytes || n.kind == Kind::ByteArray) {
            out.literal = &n.text;
            return true;
        }
        if (n.kind != Kind::Call || !isGlobal(n.a))
            return false;
        const std::string& fn = globalPath(n.a);
        const auto args = argsOf(n.b, kNoNode);
        if (fn == "_codecs.encode" && args.size() == 2 && valid(args[0]) && valid(args[1])
            && m_graph[args[0]].kind == Kind::String && m_graph[args[1]].kind == Kind::String
            && isLatin1Codec(m_graph[args[1]].text))
            return latin1(m_graph[args[0]].text, out.computed);
        if ((fn == "builtins.bytes" || fn == "builtins.bytearray") && args.size() == 1 && valid(args[0])) {
            const Node& a = m_graph[args[0]];
            if (a.kind == Kind::Bytes || a.kind == Kind::ByteArray) {
                out.literal = &a.text;
                return true;
            }
            if (a.kind == Kind::List || a.kind == Kind::Tuple) {
                for (NodeId item : a.items) {
                    if (!valid(item) || m_graph[item].kind != Kind::Int || m_graph[item].i < 0 || m_graph[item].i > 255)
                        return false;
                    out.computed.push_back(static_cast<char>(m_graph[item].i));
                }
                return true;
            }
        }
        return false;
    }

    // UTF-8 text (as the graph keeps strings) to Latin-1 bytes; false when a code point is above U+00FF,
    // where CPython's encode would fail.
    static bool latin1(const std::string& utf8, std::string& out)
    {
        out.reserve(utf8.size());
        for (std::size_t i = 0; i < utf8.size(); ++i) {
            const auto c = static_cast<unsigned char>(utf8[i]);
            if (c < 0x80) {
                out.push_back(static_cast<char>(c));
            } else if ((c == 0xC2 || c == 0xC3) && i + 1 < utf8.size()) {
                out.push_back(static_cast<char>(((c & 0x1F) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3F)));
            } else {
                return false;
            }
        }
        return true;
    }

    void callHookValues(NodeId hooks, const std::string& path, int depth)
    {
        if (!valid(hooks))
            return;
        const Node& h = m_graph[hooks];
        const bool dictLike = h.kind == Kind::Dict || ((h.kind == Kind::Call || h.kind == Kind::NewObj) && (h.ref & kDictItems) != 0);
        if (dictLike) {
            for (std::size_t i = 1; i < h.items.size(); i += 2)
                callWith(h.items[i], {}, "called by autograd (a backward hook given to " + path + ")", depth + 1);
        } else if (h.kind == Kind::Global) {
            callWith(hooks, {}, "called by autograd (a backward hook given to " + path + ")", depth + 1);
        }
    }

    // A value that something will call into: callables in it, in containers too, count as called.
    void handTo(NodeId id, const std::string& via, int depth, int nesting)
    {
        if (!valid(id) || nesting > 4 || depth > kMaxDepth)
            return;
        const Node& n = m_graph[id];
        switch (n.kind) {
        case Kind::Global:
        case Kind::Call:
        case Kind::NewObj:
            callWith(id, {}, via, depth);
            return;
        case Kind::Tuple:
        case Kind::List:
        case Kind::Dict:
        case Kind::Set:
        case Kind::FrozenSet:
            if (!m_handed.insert(id).second)
                return;
            for (NodeId item : n.items)
                handTo(item, via, depth, nesting + 1);
            return;
        default:
            return;
        }
    }

    // What is written into a module or class is reached by every later call of its names.
    void recordWrites(const Node& g)
    {
        const std::string via = "written into " + g.text + ", where later calls of its names run it";
        if (valid(g.state)) {
            m_out.writes.push_back({g.text, "BUILD replaces its attributes"});
            handTo(g.state, via, 0, 0);
        }
        for (NodeId item : g.items)
            handTo(item, via, 0, 0);
        if (!g.items.empty()) {
            std::string how;
            for (const auto& [bit, text] : {std::pair{kListItems, "APPEND calls its append/extend"},
                                            std::pair{kDictItems, "SETITEM writes into it"},
                                            std::pair{kSetItems, "ADDITEMS calls its add"}}) {
                if (g.ref & bit)
                    how += (how.empty() ? "" : ", ") + std::string(text);
            }
            m_out.writes.push_back({g.text, how.empty() ? std::string("items added to it") : how});
        }
    }

    const ValueGraph& m_graph;
    CallFlow m_out;
    std::unordered_map<std::string, bool> m_storesCache;
    std::unordered_set<NodeId> m_handed;
};

} // namespace

CallFlow analyseCallFlow(const ValueGraph& graph)
{
    return Flow(graph).run();
}

} // namespace ckpt
