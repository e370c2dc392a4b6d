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

// CPython 3.11 Lib/_compat_pickle.py NAME_MAPPING and IMPORT_MAPPING, whole (generated from
// /usr/bin/python3's module): the unpickler applies them to GLOBAL names below protocol 3
// (Modules/_pickle.c _pickle_Unpickler_find_class_impl, fix_imports=True as torch.load leaves it).
// A name outside them is not renamed: 'dumbdbm open' is dbm.dumb.open, 'execfile' stays unmapped.
constexpr std::array<NameMapping, 88> kNameMappings{{
    NameMapping{"UserDict", "IterableUserDict", "collections", "UserDict"},
    NameMapping{"UserDict", "UserDict", "collections", "UserDict"},
    NameMapping{"UserList", "UserList", "collections", "UserList"},
    NameMapping{"UserString", "UserString", "collections", "UserString"},
    NameMapping{"__builtin__", "basestring", "builtins", "str"},
    NameMapping{"__builtin__", "intern", "sys", "intern"},
    NameMapping{"__builtin__", "long", "builtins", "int"},
    NameMapping{"__builtin__", "reduce", "functools", "reduce"},
    NameMapping{"__builtin__", "unichr", "builtins", "chr"},
    NameMapping{"__builtin__", "unicode", "builtins", "str"},
    NameMapping{"__builtin__", "xrange", "builtins", "range"},
    NameMapping{"_multiprocessing", "Connection", "multiprocessing.connection", "Connection"},
    NameMapping{"_socket", "fromfd", "socket", "fromfd"},
    NameMapping{"exceptions", "ArithmeticError", "builtins", "ArithmeticError"},
    NameMapping{"exceptions", "AssertionError", "builtins", "AssertionError"},
    NameMapping{"exceptions", "AttributeError", "builtins", "AttributeError"},
    NameMapping{"exceptions", "BaseException", "builtins", "BaseException"},
    NameMapping{"exceptions", "BufferError", "builtins", "BufferError"},
    NameMapping{"exceptions", "BytesWarning", "builtins", "BytesWarning"},
    NameMapping{"exceptions", "DeprecationWarning", "builtins", "DeprecationWarning"},
    NameMapping{"exceptions", "EOFError", "builtins", "EOFError"},
    NameMapping{"exceptions", "EnvironmentError", "builtins", "EnvironmentError"},
    NameMapping{"exceptions", "Exception", "builtins", "Exception"},
    NameMapping{"exceptions", "FloatingPointError", "builtins", "FloatingPointError"},
    NameMapping{"exceptions", "FutureWarning", "builtins", "FutureWarning"},
    NameMapping{"exceptions", "GeneratorExit", "builtins", "GeneratorExit"},
    NameMapping{"exceptions", "IOError", "builtins", "IOError"},
    NameMapping{"exceptions", "ImportError", "builtins", "ImportError"},
    NameMapping{"exceptions", "ImportWarning", "builtins", "ImportWarning"},
    NameMapping{"exceptions", "IndentationError", "builtins", "IndentationError"},
    NameMapping{"exceptions", "IndexError", "builtins", "IndexError"},
    NameMapping{"exceptions", "KeyError", "builtins", "KeyError"},
    NameMapping{"exceptions", "KeyboardInterrupt", "builtins", "KeyboardInterrupt"},
    NameMapping{"exceptions", "LookupError", "builtins", "LookupError"},
    NameMapping{"exceptions", "MemoryError", "builtins", "MemoryError"},
    NameMapping{"exceptions", "NameError", "builtins", "NameError"},
    NameMapping{"exceptions", "NotImplementedError", "builtins", "NotImplementedError"},
    NameMapping{"exceptions", "OSError", "builtins", "OSError"},
    NameMapping{"exceptions", "OverflowError", "builtins", "OverflowError"},
    NameMapping{"exceptions", "PendingDeprecationWarning", "builtins", "PendingDeprecationWarning"},
    NameMapping{"exceptions", "ReferenceError", "builtins", "ReferenceError"},
    NameMapping{"exceptions", "RuntimeError", "builtins", "RuntimeError"},
    NameMapping{"exceptions", "RuntimeWarning", "builtins", "RuntimeWarning"},
    NameMapping{"exceptions", "StandardError", "builtins", "Exception"},
    NameMapping{"exceptions", "StopIteration", "builtins", "StopIteration"},
    NameMapping{"exceptions", "SyntaxError", "builtins", "SyntaxError"},
    NameMapping{"exceptions", "SyntaxWarning", "builtins", "SyntaxWarning"},
    NameMapping{"exceptions", "SystemError", "builtins", "SystemError"},
    NameMapping{"exceptions", "SystemExit", "builtins", "SystemExit"},
    NameMapping{"exceptions", "TabError", "builtins", "TabError"},
    NameMapping{"exceptions", "TypeError", "builtins", "TypeError"},
    NameMapping{"exceptions", "UnboundLocalError", "builtins", "UnboundLocalError"},
    NameMapping{"exceptions", "UnicodeDecodeError", "builtins", "UnicodeDecodeError"},
    NameMapping{"exceptions", "UnicodeEncodeError", "builtins", "UnicodeEncodeError"},
    NameMapping{"exceptions", "UnicodeError", "builtins", "UnicodeError"},
    NameMapping{"exceptions", "UnicodeTranslateError", "builtins", "UnicodeTranslateError"},
    NameMapping{"exceptions", "UnicodeWarning", "builtins", "UnicodeWarning"},
    NameMapping{"exceptions", "UserWarning", "builtins", "UserWarning"},
    NameMapping{"exceptions", "ValueError", "builtins", "ValueError"},
    NameMapping{"exceptions", "Warning", "builtins", "Warning"},
    NameMapping{"exceptions", "ZeroDivisionError", "builtins", "ZeroDivisionError"},
    NameMapping{"itertools", "ifilter", "builtins", "filter"},
    NameMapping{"itertools", "ifilterfalse", "itertools", "filterfalse"},
    NameMapping{"itertools", "imap", "builtins", "map"},
    NameMapping{"itertools", "izip", "builtins", "zip"},
    NameMapping{"itertools", "izip_longest", "itertools", "zip_longest"},
    NameMapping{"multiprocessing", "AuthenticationError", "multiprocessing.context", "AuthenticationError"},
    NameMapping{"multiprocessing", "BufferTooShort", "multiprocessing.context", "BufferTooShort"},
    NameMapping{"multiprocessing", "ProcessError", "multiprocessing.context", "ProcessError"},
    NameMapping{"multiprocessing", "TimeoutError", "multiprocessing.context", "TimeoutError"},
    NameMapping{"multiprocessing.forking", "Popen", "multiprocessing.popen_fork", "Popen"},
    NameMapping{"multiprocessing.process", "Process", "multiprocessing.context", "Process"},
    NameMapping{"socket", "_socketobject", "socket", "SocketType"},
    NameMapping{"urllib", "ContentTooShortError", "urllib.error", "ContentTooShortError"},
    NameMapping{"urllib", "getproxies", "urllib.request", "getproxies"},
    NameMapping{"urllib", "pathname2url", "urllib.request", "pathname2url"},
    NameMapping{"urllib", "quote", "urllib.parse", "quote"},
    NameMapping{"urllib", "quote_plus", "urllib.parse", "quote_plus"},
    NameMapping{"urllib", "unquote", "urllib.parse", "unquote"},
    NameMapping{"urllib", "unquote_plus", "urllib.parse", "unquote_plus"},
    NameMapping{"urllib", "url2pathname", "urllib.request", "url2pathname"},
    NameMapping{"urllib", "urlcleanup", "urllib.request", "urlcleanup"},
    NameMapping{"urllib", "urlencode", "urllib.parse", "urlencode"},
    NameMapping{"urllib", "urlopen", "urllib.request", "urlopen"},
    NameMapping{"urllib", "urlretrieve", "urllib.request", "urlretrieve"},
    NameMapping{"urllib2", "HTTPError", "urllib.error", "HTTPError"},
    NameMapping{"urllib2", "URLError", "urllib.error", "URLError"},
    NameMapping{"whichdb", "whichdb", "dbm", "whichdb"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 55> kImportMappings{{
    {"BaseHTTPServer", "http.server"},
    {"CGIHTTPServer", "http.server"},
    {"ConfigParser", "configparser"},
    {"Cookie", "http.cookies"},
    {"Dialog", "tkinter.dialog"},
    {"DocXMLRPCServer", "xmlrpc.server"},
    {"FileDialog", "tkinter.filedialog"},
    {"HTMLParser", "html.parser"},
    {"Queue", "queue"},
    {"ScrolledText", "tkinter.scrolledtext"},
    {"SimpleDialog", "tkinter.simpledialog"},
    {"SimpleHTTPServer", "http.server"},
    {"SimpleXMLRPCServer", "xmlrpc.server"},
    {"SocketServer", "socketserver"},
    {"StringIO", "io"},
    {"Tix", "tkinter.tix"},
    {"Tkconstants", "tkinter.constants"},
    {"Tkdnd", "tkinter.dnd"},
    {"Tkinter", "tkinter"},
    {"UserDict", "collections"},
    {"UserList", "collections"},
    {"UserString", "collections"},
    {"__builtin__", "builtins"},
    {"_abcoll", "collections.abc"},
    {"_elementtree", "xml.etree.ElementTree"},
    {"_winreg", "winreg"},
    {"anydbm", "dbm"},
    {"cPickle", "pickle"},
    {"cStringIO", "io"},
    {"commands", "subprocess"},
    {"cookielib", "http.cookiejar"},
    {"copy_reg", "copyreg"},
    {"dbhash", "dbm.bsd"},
    {"dbm", "dbm.ndbm"},
    {"dumbdbm", "dbm.dumb"},
    {"dummy_thread", "_dummy_thread"},
    {"gdbm", "dbm.gnu"},
    {"htmlentitydefs", "html.entities"},
    {"httplib", "http.client"},
    {"markupbase", "_markupbase"},
    {"repr", "reprlib"},
    {"robotparser", "urllib.robotparser"},
    {"test.test_support", "test.support"},
    {"thread", "_thread"},
    {"tkColorChooser", "tkinter.colorchooser"},
    {"tkCommonDialog", "tkinter.commondialog"},
    {"tkFileDialog", "tkinter.filedialog"},
    {"tkFont", "tkinter.font"},
    {"tkMessageBox", "tkinter.messagebox"},
    {"tkSimpleDialog", "tkinter.simpledialog"},
    {"ttk", "tkinter.ttk"},
    {"urllib2", "urllib.request"},
    {"urlparse", "urllib.parse"},
    {"whichdb", "dbm"},
    {"xmlrpclib", "xmlrpc.client"},
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
    auto [m, n] = m_protocol < 3 ? mapPython2Name(module, name) : std::pair<std::string, std::string>{module, name};
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
