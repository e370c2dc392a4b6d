// SPDX-License-Identifier: MIT
// How an import named by a pickle is classified: the sourced tables (torch's weights_only allowlist,
// the dangerous and tamper lists, the standard library) and the rules over them. The report that
// applies them to a file is imports_report.cpp.
#include "ckpt/pickle/imports_report.h"

#include "ckpt/pickle/call_flow.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_set>

namespace ckpt {
namespace {

// Top-level module names of the Python 3.11 standard library (sys.stdlib_module_names) plus
// later and Python 2 names. A standard-library callable that is not a known value type has no
// business in a checkpoint: that is how the picklescan advisory gadgets (idlelib, cProfile,
// trace, pydoc, imaplib...) are caught without listing each one.
constexpr std::string_view kStdlib = "__future__ _abc _aix_support _ast _asyncio _bisect _blake2 _bootsubprocess _bz2 _codecs _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections _collections_abc _compat_pickle _compression _contextvars _crypt _csv _ctypes _curses _curses_panel _datetime _dbm _decimal _elementtree _frozen_importlib _frozen_importlib_external _functools _gdbm _hashlib _heapq _imp _io _json _locale _lsprof _lzma _markupbase _md5 _msi _multibytecodec _multiprocessing _opcode _operator _osx_support _overlapped _pickle _posixshmem _posixsubprocess _py_abc _pydecimal _pyio _pyrepl _queue _random _scproxy _sha1 _sha256 _sha3 _sha512 _signal _sitebuiltins _socket _sqlite3 _sre _ssl _stat _statistics _string _strptime _struct _symtable _thread _threading_local _tkinter _tokenize _tracemalloc _typing _uuid _warnings _weakref _weakrefset _winapi _zoneinfo abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii bisect builtins bz2 cPickle cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys commands compileall concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http httplib idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios test textwrap this threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib urllib2 uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo";

const std::unordered_set<std::string_view>& stdlibModules()
{
    static const std::unordered_set<std::string_view> set = [] {
        std::unordered_set<std::string_view> s;
        std::string_view rest = kStdlib;
        while (!rest.empty()) {
            const auto sp = rest.find(' ');
            s.insert(rest.substr(0, sp));
            rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
        }
        return s;
    }();
    return set;
}

struct Rule {
    std::string_view path;   // "module.name", or "module.*" for the module and its submodules
    std::string_view reason;
};

// Safe: torch's weights_only allowlist (formats.md §3.2) plus the training state it misses.
constexpr std::array kSafe{
    Rule{"collections.OrderedDict", "dict type"},
    Rule{"collections.Counter", "dict type (MultiStepLR milestones)"},
    Rule{"collections.defaultdict", "dict type (whole-optimizer state)"},
    Rule{"collections.deque", "container type"},
    Rule{"builtins.set", "container type"},
    Rule{"builtins.frozenset", "container type"},
    Rule{"builtins.complex", "number type"},
    Rule{"builtins.bytearray", "bytes type"},
    Rule{"builtins.bytes", "bytes type"},
    Rule{"builtins.slice", "value type"},
    Rule{"builtins.range", "value type"},
    Rule{"builtins.object", "base class"},
    Rule{"builtins.int", "value type"},
    Rule{"builtins.float", "value type"},
    Rule{"builtins.str", "value type"},
    Rule{"builtins.bool", "value type"},
    Rule{"builtins.list", "container type"},
    Rule{"builtins.tuple", "container type"},
    Rule{"builtins.dict", "container type"},
    Rule{"_codecs.encode", "bytes at pickle protocol 2 (numpy RNG state)"},
    Rule{"copyreg._reconstructor", "protocol 0/1 object reconstruction"},
    Rule{"argparse.Namespace", "training configuration"},
    Rule{"types.SimpleNamespace", "training configuration"},
    Rule{"datetime.*", "date and time values"},
    Rule{"decimal.Decimal", "number type"},
    Rule{"fractions.Fraction", "number type"},
    Rule{"uuid.UUID", "value type"},
    Rule{"pathlib.PosixPath", "path value"},
    Rule{"pathlib.WindowsPath", "path value"},
    Rule{"pathlib.PurePosixPath", "path value"},
    Rule{"pathlib.PureWindowsPath", "path value"},
    Rule{"pathlib.Path", "path value"},
    Rule{"re._compile", "compiled regular expression"},
    Rule{"numpy.core.multiarray._reconstruct", "numpy array (numpy 1.x)"},
    Rule{"numpy._core.multiarray._reconstruct", "numpy array (numpy 2.x)"},
    Rule{"numpy.core.multiarray.scalar", "numpy scalar (numpy 1.x)"},
    Rule{"numpy._core.multiarray.scalar", "numpy scalar (numpy 2.x)"},
    Rule{"numpy.core.numeric._frombuffer", "numpy array at protocol 5"},
    Rule{"numpy._core.numeric._frombuffer", "numpy array at protocol 5"},
    Rule{"numpy.ndarray", "numpy array type"},
    Rule{"numpy.dtype", "numpy dtype"},
    Rule{"numpy.dtypes.*", "numpy dtype classes"},
    Rule{"torch.nn.parameter.Parameter", "tensor type"},
    Rule{"torch.Tensor", "tensor type"},
    Rule{"torch.Size", "shape"},
    Rule{"torch.device", "device"},
    Rule{"torch.serialization._get_layout", "tensor layout"},
    Rule{"torch._tensor._rebuild_from_type_v2", "tensor subclass rebuild"},
    Rule{"torch.jit._pickle.*", "TorchScript pickler helpers"},
    Rule{"torch.torch_version.TorchVersion", "torch.__version__ (a str subclass)"},
};

constexpr std::array<std::string_view, 14> kTorchRebuild{
    "_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
    "_rebuild_parameter_with_state", "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_sparse_csr_tensor",
    "_rebuild_meta_tensor_no_storage", "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy",
    "_rebuild_device_tensor_from_cpu_tensor", "_rebuild_xla_tensor", "_rebuild_nested_tensor"};

constexpr std::array kDangerous{
    Rule{"os.*", "runs commands and touches files"},
    Rule{"posix.*", "runs commands and touches files"},
    Rule{"nt.*", "runs commands and touches files"},
    Rule{"sys.*", "interpreter internals"},
    Rule{"subprocess.*", "runs commands"},
    Rule{"pty.*", "spawns processes"},
    Rule{"runpy.*", "runs Python code"},
    Rule{"importlib.*", "imports arbitrary code"},
    Rule{"pickle.*", "unpickles nested data without checks"},
    Rule{"_pickle.*", "unpickles nested data without checks"},
    Rule{"marshal.*", "loads code objects"},
    Rule{"shutil.*", "copies and deletes files"},
    Rule{"socket.*", "opens network connections"},
    Rule{"ctypes.*", "calls native code"},
    Rule{"__builtins__.*", "the builtins namespace by its internal name: no module of that name imports, and a loader "
                           "that resolves it hands out eval and exec (fickling's UNSAFE_IMPORTS lists it)"},
    Rule{"builtins.eval", "evaluates Python code"},
    Rule{"builtins.exec", "executes Python code"},
    Rule{"builtins.compile", "compiles Python code"},
    Rule{"builtins.open", "opens files"},
    Rule{"builtins.getattr", "reaches arbitrary attributes (the usual gadget to get at os.system)"},
    Rule{"builtins.setattr", "modifies arbitrary objects"},
    Rule{"builtins.delattr", "modifies arbitrary objects"},
    Rule{"builtins.__import__", "imports arbitrary modules"},
    Rule{"builtins.globals", "exposes interpreter globals"},
    Rule{"builtins.locals", "exposes interpreter locals"},
    Rule{"builtins.vars", "exposes object internals"},
    Rule{"builtins.breakpoint", "starts a debugger"},
    Rule{"builtins.input", "reads from the terminal"},
    Rule{"operator.attrgetter", "reaches arbitrary attributes"},
    Rule{"operator.methodcaller", "calls arbitrary methods"},
    Rule{"_operator.attrgetter", "reaches arbitrary attributes"},
    Rule{"_operator.methodcaller", "calls arbitrary methods"},
    Rule{"types.CodeType", "builds code objects"},
    Rule{"types.FunctionType", "builds functions from code objects"},
    Rule{"io.*", "opens files"},
    Rule{"_io.*", "opens files"},
    Rule{"codecs.open", "opens files"},
    Rule{"logging.FileHandler", "writes files"},
    Rule{"logging.handlers.*", "writes files and opens connections"},
    Rule{"logging.config.*", "can run configuration code"},
    Rule{"requests.*", "makes network requests"},
    Rule{"aiohttp.*", "makes network requests"},
    Rule{"httpx.*", "makes network requests"},
    Rule{"urllib3.*", "makes network requests"},
    Rule{"pip.*", "installs packages"},
    Rule{"setuptools.*", "builds and installs packages"},
    Rule{"cloudpickle.*", "rebuilds functions from code objects"},
    Rule{"dill.*", "rebuilds functions from code objects"},
    Rule{"joblib.*", "loads nested pickles"},
    Rule{"numpy.testing.*", "runs code strings"},
    Rule{"numpy.load", "loads nested pickles"},
    Rule{"numpy.lib.npyio.*", "loads nested pickles"},
    Rule{"torch.load", "loads a nested checkpoint without checks"},
    Rule{"torch.serialization.load", "loads a nested checkpoint without checks"},
    Rule{"torch.storage._load_from_bytes", "loads a nested checkpoint without checks"},
    Rule{"torch.save", "writes files"},
    Rule{"torch.serialization.save", "writes files"},
    Rule{"numpy.lib.format.open_memmap", "creates and maps files"},
    Rule{"torch.utils.bottleneck.*", "runs scripts"},
    Rule{"torch.utils.collect_env.*", "runs commands"},
    Rule{"torch.utils._config_module.*", "loads pickled configuration"},
    Rule{"torch.utils.data.datapipes.*", "decodes with arbitrary handlers"},
    Rule{"torch.fx.*", "evaluates code"},
    Rule{"torch.distributed.rpc.*", "calls remote functions"},
    // Third-party callables that do I/O or load code, from the picklescan, modelscan and ModelAudit
    // advisories (GHSA-2024..2026) and their deny lists; with --strict every other called one too.
    Rule{"numpy.memmap", "maps a file, and creates it with mode w+"},
    Rule{"numpy.fromfile", "reads files"},
    Rule{"numpy.save", "writes files"},
    Rule{"numpy.savez", "writes files"},
    Rule{"numpy.savez_compressed", "writes files"},
    Rule{"numpy.savetxt", "writes files"},
    Rule{"numpy.loadtxt", "reads files (and calls its converters)"},
    Rule{"numpy.genfromtxt", "reads files (and calls its converters)"},
    Rule{"numpy.lib.format.*", "loads nested pickles"},
    Rule{"numpy.lib._npyio_impl.*", "loads nested pickles"},
    Rule{"numpy.lib._format_impl.*", "loads nested pickles"},
    Rule{"numpy.ctypeslib.*", "loads native libraries"},
    Rule{"pandas.read_*", "reads files and URLs (read_pickle unpickles them)"},
    Rule{"pandas.io.*", "reads and writes files, unpickles them"},
    Rule{"pandas.eval", "evaluates expressions"},
    Rule{"pandas.core.computation.*", "evaluates expressions"},
    Rule{"numexpr.*", "evaluates expressions"},
    Rule{"sympy.*", "evaluates expressions (sympify)"},
    Rule{"torch.testing._internal.*", "test helpers that run shell commands"},
    Rule{"torch.utils.cpp_extension.*", "compiles and loads native code"},
    Rule{"torch.package.*", "imports packaged code"},
    Rule{"torch.multiprocessing.*", "starts processes"},
    Rule{"torch.distributed.elastic.*", "starts processes"},
    Rule{"torch.distributed.launch*", "starts processes"},
    Rule{"torch.distributed.run*", "starts processes"},
    Rule{"torch.cuda.jiterator.*", "compiles and runs code"},
    Rule{"torch.library.*", "registers kernels"},
    Rule{"torch.utils.tensorboard.*", "writes files"},
    Rule{"torch._export.*", "loads and runs exported programs"},
    Rule{"torch.export.*", "loads and runs exported programs"},
    Rule{"tensorflow.*", "file I/O and graph execution"},
    Rule{"keras.*", "Lambda layers run code"},
    Rule{"jinja2.*", "templates run code"},
    Rule{"yaml.*", "yaml.load builds arbitrary objects"},
    Rule{"huggingface_hub.*", "downloads files"},
    Rule{"transformers.dynamic_module_utils.*", "imports remote code"},
    Rule{"fsspec.*", "opens local and remote files"},
    Rule{"smart_open.*", "opens local and remote files"},
    Rule{"boto3.*", "makes network requests"},
    Rule{"botocore.*", "makes network requests"},
    Rule{"paramiko.*", "opens SSH connections"},
    Rule{"fabric.*", "runs remote commands"},
    Rule{"pexpect.*", "spawns processes"},
    Rule{"sh.*", "runs commands"},
    Rule{"plumbum.*", "runs commands"},
    Rule{"cffi.*", "calls native code"},
    Rule{"IPython.*", "runs code"},
    Rule{"pkg_resources.*", "imports entry points"},
    Rule{"importlib_metadata.*", "imports entry points"},
};

// Imports that tamper with the pickle scanners themselves or compile and run code, each with the
// list or advisory that names it. A pickle has no business importing a security tool: fickling's
// hook functions remove its own import hook (deactivate_safe_ml_environment is remove_hook), and
// any other attribute of a scanner package is how a payload would reach them. Even referenced
// without a call, these are dangerous (never the "referenced as a value" downgrade).
struct SourcedRule {
    std::string_view path;
    std::string_view reason;
    std::string_view source;
};

constexpr std::array kTamperAndCompile{
    SourcedRule{"fickling.*", "the fickling pickle scanner: imported by a pickle only to switch it off (fickling.hook.remove_hook)",
                "fickling ScannerDeactivation, fickling/analysis.py @854c99a; fickling/hook.py"},
    SourcedRule{"picklescan.*", "the picklescan pickle scanner: a pickle has no business importing a security tool",
                "fickling ScannerDeactivation, fickling/analysis.py @854c99a"},
    SourcedRule{"modelscan.*", "the modelscan model scanner: a pickle has no business importing a security tool",
                "fickling ScannerDeactivation, fickling/analysis.py @854c99a"},
    SourcedRule{"modelaudit.*", "the ModelAudit scanner: a pickle has no business importing a security tool",
                "fickling ScannerDeactivation, fickling/analysis.py @854c99a"},
    SourcedRule{"saferpickle.*", "the saferpickle loader: a pickle has no business importing a security tool",
                "fickling ScannerDeactivation, fickling/analysis.py @854c99a"},
    SourcedRule{"model_unpickler.*", "a restricted model unpickler: a pickle has no business importing a security tool",
                "fickling ScannerDeactivation, fickling/analysis.py @854c99a"},
    SourcedRule{"torch.compile", "compiles and runs code", "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"torch.compile.*", "compiles and runs code (named as a module; torch.compile is a function)",
                "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"torch._dynamo.*", "compiles and runs code (TorchDynamo)", "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"torch._inductor.*", "generates and runs compiled code (TorchInductor)",
                "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"torch.jit.*", "compiles and runs TorchScript", "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"torch._C._jit*", "compiles and runs TorchScript", "picklescan _unsafe_globals (torch._C), src/picklescan/scanner.py @f15d54d"},
    SourcedRule{"torch.hub.*", "downloads and runs code", "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"numpy.f2py.*", "compiles and runs Fortran/C code", "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
    SourcedRule{"numpy.distutils.*", "runs build commands", "fickling UnsafeImportsML, fickling/analysis.py @854c99a"},
};

bool isDangerousModuleName(std::string_view name)
{
    static const std::unordered_set<std::string_view> kModuleNames{
        "os", "_os", "sys", "_sys", "posix", "nt", "subprocess", "_subprocess", "builtins", "__builtins__", "importlib",
        "shutil", "socket", "ctypes", "pickle", "_pickle", "runpy", "io", "_io", "marshal", "pty", "code", "codeop"};
    return kModuleNames.contains(name);
}

// "str.upper", "dict.fromkeys": a public method of a builtin value type, which protocol 4 names by
// a qualified name (CPython's test_load_stack_global). Such a method only works on the values it
// is given. str.format and format_map are not among them: a format string reaches attributes.
bool isValueTypeMethod(std::string_view name)
{
    static constexpr std::string_view kTypes[] = {"str", "bytes", "bytearray", "int", "float", "complex", "bool",
                                                  "list", "tuple", "dict", "set", "frozenset", "range", "slice"};
    const auto dot = name.find('.');
    if (dot == std::string_view::npos)
        return false;
    const std::string_view type = name.substr(0, dot), method = name.substr(dot + 1);
    if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes))
        return false;
    if (method.empty() || method.starts_with('_') || method == "format" || method == "format_map")
        return false;
    return std::all_of(method.begin(), method.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

// Builtins that compute on their arguments and reach nothing else: no attribute by name, no I/O, no
// code, no function of the pickle's called (CPython's own test pickles use len). map, filter,
// sorted, min, max and iter call a function they are handed: helpers that call, dangerous as such
// (tests/fixtures/bypasses.md, class 1).
bool isInertBuiltin(std::string_view name)
{
    static constexpr std::string_view kNames[] = {
        "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "hash", "hex", "id", "isinstance",
        "issubclass", "len", "oct", "ord", "pow", "repr", "round", "sum", "next", "enumerate", "reversed", "zip",
        "format"};
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

bool isExceptionClass(std::string_view name)
{
    return name.ends_with("Error") || name.ends_with("Exception") || name.ends_with("Warning")
        || name == "GeneratorExit" || name == "KeyboardInterrupt" || name == "SystemExit" || name == "StopIteration"
        || name == "StopAsyncIteration" || name == "BaseExceptionGroup" || name == "ExceptionGroup";
}

bool matches(std::string_view rule, std::string_view module, std::string_view name)
{
    if (rule.ends_with(".*")) {
        const std::string_view m = rule.substr(0, rule.size() - 2);
        return module == m || (module.starts_with(m) && module.size() > m.size() && module[m.size()] == '.');
    }
    if (rule.ends_with("*")) { // prefix of a dotted path
        const std::string full = std::string(module) + "." + std::string(name);
        return std::string_view(full).starts_with(rule.substr(0, rule.size() - 1));
    }
    return rule.size() == module.size() + 1 + name.size() && rule.starts_with(module) && rule[module.size()] == '.'
        && rule.substr(module.size() + 1) == name;
}

bool isTorchDtypeOrType(std::string_view module, std::string_view name)
{
    if (module == "torch" || module == "torch.cuda" || module == "torch.storage" || module == "torch.sparse") {
        return name.ends_with("Storage") || name.ends_with("Tensor") || name.starts_with("per_")
            || name == "float32" || name == "float64" || name == "float16" || name == "bfloat16" || name == "int8"
            || name == "int16" || name == "int32" || name == "int64" || name == "uint8" || name == "uint16"
            || name == "uint32" || name == "uint64" || name == "bool" || name == "complex32" || name == "complex64"
            || name == "complex128" || name == "qint8" || name == "quint8" || name == "qint32" || name == "quint4x2"
            || name == "quint2x4" || name.starts_with("float8_") || name.starts_with("bits") || name == "float4_e2m1fn_x2"
            || name == "half" || name == "float" || name == "double" || name == "long" || name == "int"
            || name == "short" || name == "cfloat" || name == "cdouble";
    }
    return false;
}

} // namespace

const char* safetyName(ImportSafety safety)
{
    switch (safety) {
    case ImportSafety::Safe: return "safe";
    case ImportSafety::Unknown: return "unknown";
    case ImportSafety::Dangerous: return "dangerous";
    }
    return "?";
}

ImportSafety classifyGlobal(const std::string& module, const std::string& name, std::string& reason)
{
    if (module == "?" || name == "?") {
        reason = "a global whose name is computed while unpickling, so it cannot be checked";
        return ImportSafety::Dangerous;
    }
    if (module == "torch._utils"
        && std::find(kTorchRebuild.begin(), kTorchRebuild.end(), name) != kTorchRebuild.end()) {
        reason = "tensor rebuild";
        return ImportSafety::Safe;
    }
    if (isTorchDtypeOrType(module, name)) {
        reason = "torch dtype, storage or tensor type";
        return ImportSafety::Safe;
    }
    for (const auto& r : kSafe) {
        if (matches(r.path, module, name)) {
            reason = r.reason;
            return ImportSafety::Safe;
        }
    }
    if ((module == "io" || module == "_io") && (name == "BytesIO" || name == "StringIO")) {
        reason = "an in-memory buffer: it opens no file (fickling's ML allowlist holds io.BytesIO)";
        return ImportSafety::Unknown;
    }
    // After the allowlist: torch.jit._pickle's helpers are what TorchScript files are made of.
    for (const auto& r : kTamperAndCompile) {
        if (matches(r.path, module, name)) {
            reason = std::string(r.reason) + " (listed by " + std::string(r.source) + ")";
            return ImportSafety::Dangerous;
        }
    }
    for (const auto& r : kDangerous) {
        if (matches(r.path, module, name)) {
            reason = r.reason;
            return ImportSafety::Dangerous;
        }
    }
    if (module == "builtins" && isInertBuiltin(name)) {
        reason = "a builtin that only computes on the values it is given (" + name + "); what it is given is judged on its own";
        return ImportSafety::Unknown;
    }
    if (module == "builtins" && isExceptionClass(name)) {
        reason = "an exception class: constructing one runs nothing";
        return ImportSafety::Unknown;
    }
    if (module == "builtins" && isValueTypeMethod(name)) {
        reason = "a method of a builtin value type (" + name + "): it works on the values the pickle passes it";
        return ImportSafety::Unknown;
    }
    if (module == "builtins") {
        reason = "a Python builtin callable other than a plain value type";
        return ImportSafety::Dangerous;
    }
    // Protocol 4 lets a global name a qualified path, resolved attribute by attribute: "Outer.Inner"
    // is a nested class, while "Bdb.run" is a method and "subprocess.Popen" under
    // torch.utils.cpp_extension is a module reached through another one's attribute. Only chains of
    // classes (every part capitalised) are what picklers write for nested classes.
    if (name.find('.') != std::string::npos) {
        std::string_view rest = name;
        while (!rest.empty()) {
            const auto dot = rest.find('.');
            const std::string_view part = rest.substr(0, dot);
            if (part.empty() || !(part[0] >= 'A' && part[0] <= 'Z')) {
                reason = "reaches '" + std::string(part) + "' inside " + module + " by a qualified name ("
                         + name + "): a method, module or attribute, a known gadget pattern";
                return ImportSafety::Dangerous;
            }
            rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
        }
    }
    if (name.starts_with("__") && name.ends_with("__") && module != "copyreg") {
        reason = "a dunder attribute of " + module + " (" + name + "): interpreter internals, not a value";
        return ImportSafety::Dangerous;
    }
    // A dangerous module reached as an attribute of an innocent one: torch.os is os, argparse._sys is sys.
    if (isDangerousModuleName(name)) {
        reason = "the module " + name + " reached as an attribute of " + module + ", a known way around name checks";
        return ImportSafety::Dangerous;
    }
    if (module == "functools" && name == "partial") {
        reason = "binds arguments to a function (LambdaLR factors); the function is judged on its own";
        return ImportSafety::Unknown;
    }
    if (module == "functools" && name == "reduce") { // also __builtin__.reduce (Python 2), CPython's test_compat_unpickle
        reason = "folds a sequence with a function the pickle names, which is judged on its own";
        return ImportSafety::Unknown;
    }
    if (module == "enum" || (module == "collections" && name == "namedtuple")) {
        reason = "standard-library type machinery";
        return ImportSafety::Unknown;
    }
    const std::string top = module.substr(0, module.find('.'));
    // Private top-level modules are the interpreter's (_xxsubinterpreters in 3.11, _interpreters in
    // 3.13 run code strings): treated as standard library, whatever the list above knows.
    // (Dunder names are not: __main__ is the training script, __torch__ TorchScript's compiled classes.)
    if (stdlibModules().contains(top) || (top.starts_with('_') && !top.starts_with("__"))) {
        reason = "a standard-library callable outside the value types checkpoints use";
        return ImportSafety::Dangerous;
    }
    if (module.starts_with("torch.") || module == "torch") {
        reason = "a torch class or function outside the weights_only allowlist; unpickling constructs it";
        return ImportSafety::Unknown;
    }
    if (module == "__main__") {
        reason = "a class from the training script itself";
        return ImportSafety::Unknown;
    }
    reason = "a class or function outside the allowlist (third-party or user code)";
    return ImportSafety::Unknown;
}

bool isBenignGetattr(const GetattrUse& use, std::string& reason)
{
    if (use.attribute.empty()) {
        reason = use.target == "(passed on as a value)" ? "getattr passed on as a value, to be called unseen"
                                                        : "getattr with a computed attribute name";
        return false;
    }
    if (use.attribute.starts_with("__")) {
        reason = "getattr reaching for " + use.attribute + " (a known route to os.system)";
        return false;
    }
    const std::string module = use.target.substr(0, use.target.rfind('.'));
    const std::string name = use.target.substr(use.target.rfind('.') + 1);
    std::string targetReason;
    if (use.targetIsGlobal || use.targetIsObject) {
        if (classifyGlobal(module, name, targetReason) == ImportSafety::Dangerous) {
            reason = "getattr on " + use.target + ", which is dangerous itself";
            return false;
        }
    }
    // Enum members: getattr(EnumClass, 'NAME'); a class is CapWords (private ones after leading
    // underscores: torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING, which Python 3.11+
    // pickles this way inside every DCP .metadata), a module object is not.
    const std::size_t letter = name.find_first_not_of('_');
    if (use.targetIsGlobal && letter != std::string::npos && name[letter] >= 'A' && name[letter] <= 'Z')
        return true;
    // Bound methods: getattr(<constructed object>, 'method'), e.g. OneCycleLR's anneal_func.
    if (use.targetIsObject)
        return true;
    reason = "getattr(" + use.target + ", '" + use.attribute + "') on something that is neither a class nor an object";
    return false;
}

bool isBroadDangerRule(const std::string& module, const std::string& name)
{
    for (const auto& r : kTamperAndCompile) {
        if (matches(r.path, module, name))
            return false;
    }
    for (const auto& r : kDangerous) {
        if (matches(r.path, module, name))
            return false;
    }
    std::string reason;
    return classifyGlobal(module, name, reason) == ImportSafety::Dangerous && module != "builtins" && module != "?"
        && name.find('.') == std::string::npos && !name.starts_with("__") && !isDangerousModuleName(name);
}

} // namespace ckpt
