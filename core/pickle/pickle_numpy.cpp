// SPDX-License-Identifier: MIT
// The pickle interpreter's numpy values: dtypes, arrays (_reconstruct, _frombuffer) with their
// byte counts checked, scalars decoded from their little-endian bytes, and the latin-1 strings
// Python 2 pickles use for bytes.
#include "pickle_interpreter_impl.h"

#include "ckpt/dtypes/half_float.h"

#include <bit>
#include <limits>

namespace ckpt::detail {
namespace {

// Numpy's dtype string ('u4', 'f8', 'b1'...) to its printed name and item size.
std::pair<std::string, std::size_t> numpyDtypeName(std::string_view code)
{
    if (code.empty())
        return {"unknown", 0};
    const char kind = code[0];
    std::size_t size = 0;
    for (char c : code.substr(1)) {
        if (c < '0' || c > '9')
            return {std::string(code), 0};
        size = size * 10 + static_cast<std::size_t>(c - '0');
        if (size > (1u << 20))
            return {std::string(code), 0};
    }
    const std::string bits = std::to_string(size * 8);
    switch (kind) {
    case 'b': return {"bool", size};
    case 'i': return {"int" + bits, size};
    case 'u': return {"uint" + bits, size};
    case 'f': return {"float" + bits, size};
    case 'c': return {"complex" + bits, size};
    case 'O': return {"object", size};
    case 'S': return {"|S" + std::to_string(size), size};
    case 'U': return {"<U" + std::to_string(size), size * 4};
    case 'V': return {"|V" + std::to_string(size), size};
    case 'M': return {"datetime64", size};
    case 'm': return {"timedelta64", size};
    default: return {std::string(code), size};
    }
}

} // namespace

// ---- numpy

Node Interpreter::numpyDtype(NodeId args, const Node& rawCall, std::size_t depth)
{
    (void)depth;
    auto [name, size] = numpyDtypeName(rawString(arg(args, 0)));
    char order = '=';
    if (m_raw.valid(rawCall.state)) {
        const std::string o = rawString(arg(rawCall.state, 1));
        if (!o.empty())
            order = o[0];
    }
    if (order == '>' && size > 1)
        name = ">" + name; // numpy prints a non-native byte order explicitly
    return Node{.kind = Kind::NpDtype, .i = static_cast<int64_t>(size), .text = name, .ref = static_cast<uint8_t>(order)};
}

Node Interpreter::ndarray(NdArrayInfo a)
{
    if (m_out.valid(a.data) && m_out[a.data].kind != Kind::List && a.dtype != "object") {
        Int128 need = static_cast<Int128>(a.itemSize);
        for (int64_t d : a.shape)
            need = d < 0 ? -1 : need * d;
        const std::size_t have = m_out[a.data].text.size();
        if (need != static_cast<Int128>(have))
            a.problem = "the array needs " + std::to_string(static_cast<int64_t>(need)) + " bytes but holds "
                      + std::to_string(have);
    }
    m_doc.arrays.push_back(std::move(a));
    return Node{.kind = Kind::NdArray, .ref = static_cast<uint32_t>(m_doc.arrays.size() - 1)};
}

void Interpreter::applyDtype(NdArrayInfo& a, NodeId convertedDtype)
{
    if (!m_out.valid(convertedDtype) || m_out[convertedDtype].kind != Kind::NpDtype) {
        a.dtype = "unknown";
        return;
    }
    const Node& d = m_out[convertedDtype];
    a.dtype = d.text;
    a.itemSize = static_cast<std::size_t>(d.i);
    a.byteOrder = static_cast<char>(d.ref);
}

Node Interpreter::numpyReconstruct(const Node& rawCall, std::size_t depth)
{
    NdArrayInfo a;
    const auto& st = argItems(rawCall.state);
    std::size_t base = st.size() == 5 ? 1 : 0;
    if (st.size() != 4 && st.size() != 5)
        return Node{.kind = Kind::Object, .text = "numpy.ndarray"};
    a.shape = rawInts(st[base]).value_or(std::vector<int64_t>{});
    applyDtype(a, convert(st[base + 1], depth + 1));
    a.fortranOrder = rawTruthy(st[base + 2]);
    a.data = convert(st[base + 3], depth + 1);
    if (m_out[a.data].kind == Kind::String) // Python 2 str data: latin-1 characters
        a.data = latin1Bytes(m_out[a.data].text, Kind::Bytes);
    return ndarray(std::move(a));
}

Node Interpreter::numpyScalar(NodeId args, std::size_t depth)
{
    const NodeId dtype = convert(arg(args, 0), depth + 1);
    NodeId data = convert(arg(args, 1), depth + 1);
    if (m_out[dtype].kind != Kind::NpDtype || (m_out[data].kind != Kind::Bytes && m_out[data].kind != Kind::String))
        return Node{.kind = Kind::Object, .text = "numpy scalar"};
    if (m_out[data].kind == Kind::String)
        data = latin1Bytes(m_out[data].text, Kind::Bytes);
    const std::string name = m_out[dtype].text;
    const std::string& b = m_out[data].text;
    auto le = [&](std::size_t n) {
        uint64_t v = 0;
        for (std::size_t i = 0; i < n && i < b.size(); ++i)
            v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
        return v;
    };
    const std::size_t size = static_cast<std::size_t>(m_out[dtype].i);
    if (b.size() != size)
        return Node{.kind = Kind::Object, .text = "numpy scalar"};
    if (name == "bool")
        return Node{.kind = Kind::Bool, .flag = le(1) != 0};
    if (name.starts_with("int") && size <= 8) {
        uint64_t v = le(size);
        if (size < 8 && (v >> (8 * size - 1)) & 1)
            v |= ~uint64_t(0) << (8 * size);
        return Node{.kind = Kind::Int, .i = static_cast<int64_t>(v)};
    }
    if (name.starts_with("uint") && size <= 8) {
        const uint64_t v = le(size);
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return Node{.kind = Kind::BigInt, .text = std::to_string(v)};
        return Node{.kind = Kind::Int, .i = static_cast<int64_t>(v)};
    }
    if (name == "float64")
        return Node{.kind = Kind::Float, .f = std::bit_cast<double>(le(8))};
    if (name == "float32")
        return Node{.kind = Kind::Float, .f = std::bit_cast<float>(static_cast<uint32_t>(le(4)))};
    if (name == "float16")
        return Node{.kind = Kind::Float, .f = halfToFloat(static_cast<uint16_t>(le(2)))};
    if (name == "complex128") {
        uint64_t re = le(8), im = 0;
        for (std::size_t i = 0; i < 8; ++i)
            im |= static_cast<uint64_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
        return Node{.kind = Kind::Complex, .f = std::bit_cast<double>(re), .f2 = std::bit_cast<double>(im)};
    }
    return Node{.kind = Kind::Object, .text = "numpy scalar " + name};
}

// ---- bytes

NodeId Interpreter::latin1Bytes(const std::string& utf8, Kind kind)
{
    std::string out;
    out.reserve(utf8.size());
    for (std::size_t i = 0; i < utf8.size();) {
        const auto c = static_cast<uint8_t>(utf8[i]);
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < utf8.size()) {
            const uint32_t cp = ((c & 0x1Fu) << 6) | (static_cast<uint8_t>(utf8[i + 1]) & 0x3Fu);
            if (cp > 0xFF)
                return invalid("a latin-1 encoded bytes value holds a character above U+00FF");
            out += static_cast<char>(cp);
            i += 2;
        } else {
            return invalid("a latin-1 encoded bytes value holds a character above U+00FF");
        }
    }
    return m_out.add(Node{.kind = kind, .text = std::move(out)});
}

Node Interpreter::nodeCopy(NodeId id) const { return m_out[id]; }

} // namespace ckpt::detail
