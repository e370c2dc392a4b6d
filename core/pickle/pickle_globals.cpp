// SPDX-License-Identifier: MIT
// Globals, recorded and never imported: the Python 2 -> 3 name mapping, GLOBAL/STACK_GLOBAL records
// and getattr's calls and escapes, for the imports report; apart from the stack machine they feed.
#include "ckpt/pickle/pickle_machine.h"

#include <array>
#include <string_view>
#include <utility>

namespace ckpt {
namespace {

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

} // namespace ckpt
