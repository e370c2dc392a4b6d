// SPDX-License-Identifier: MIT
#include "ckpt/state/rng_state.h"

#include "ckpt/io/errors.h"

// GCC 12 reports std::variant<int64_t, std::string> copies of KeyPath as maybe-uninitialized;
// the same known false positive key_path.cpp silences (GCC bug 107138).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <numbers>

namespace ckpt {
namespace {

constexpr std::size_t kMtWords = 624;       // MT19937 state words
constexpr std::size_t kTorchCpuSize = 5056;  // sizeof(CPUGeneratorImplState)
constexpr std::size_t kTorchCpuLegacySize = 5048; // sizeof(CPUGeneratorImplStateLegacy), torch < 1.5 era
constexpr std::size_t kCudaOldSize = 816;    // 800 bytes 0xFF placeholder + seed + offset (torch <= 2.0)
constexpr std::size_t kCudaNewSize = 16;     // seed + offset (torch >= 2.1)

// FNV-1a, 64 bit, fed field by field in a fixed little-endian encoding so the hash does not
// depend on the container (padding, layout, the saving machine's byte order).
class Fnv64 {
public:
    void bytes(const void* data, std::size_t n)
    {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) {
            m_h ^= p[i];
            m_h *= 0x100000001b3ULL;
        }
    }
    void text(std::string_view s)
    {
        u64(s.size());
        bytes(s.data(), s.size());
    }
    void u64(uint64_t v)
    {
        unsigned char b[8];
        for (int i = 0; i < 8; ++i)
            b[i] = static_cast<unsigned char>(v >> (8 * i));
        bytes(b, 8);
    }
    void u32(uint32_t v)
    {
        unsigned char b[4];
        for (int i = 0; i < 4; ++i)
            b[i] = static_cast<unsigned char>(v >> (8 * i));
        bytes(b, 4);
    }
    void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
    void optionalF64(const std::optional<double>& v)
    {
        u32(v ? 1 : 0);
        if (v)
            f64(*v);
    }
    std::string hex() const
    {
        static const char* digits = "0123456789abcdef";
        std::string out(16, '0');
        for (int i = 0; i < 16; ++i)
            out[static_cast<std::size_t>(i)] = digits[(m_h >> (60 - 4 * i)) & 15];
        return out;
    }

private:
    uint64_t m_h = 0xcbf29ce484222325ULL;
};

void addProblem(RngState& s, const std::string& what)
{
    s.valid = false;
    s.problem += (s.problem.empty() ? "" : "; ") + what;
}

bool allZero(const std::vector<uint32_t>& words)
{
    return std::all_of(words.begin(), words.end(), [](uint32_t w) { return w == 0; });
}

// Reads fixed-width fields from a byte region in the saving machine's byte order.
struct FieldReader {
    Bytes data;
    bool bigEndian = false;

    uint64_t uint(std::size_t at, std::size_t width) const
    {
        uint64_t v = 0;
        for (std::size_t i = 0; i < width; ++i) {
            const auto b = static_cast<uint64_t>(static_cast<uint8_t>(data[at + i]));
            v |= b << (8 * (bigEndian ? width - 1 - i : i));
        }
        return v;
    }
    uint64_t u64(std::size_t at) const { return uint(at, 8); }
    int64_t i64(std::size_t at) const { return static_cast<int64_t>(uint(at, 8)); }
    int32_t i32(std::size_t at) const { return static_cast<int32_t>(static_cast<uint32_t>(uint(at, 4))); }
    double f64(std::size_t at) const { return std::bit_cast<double>(uint(at, 8)); }
    float f32(std::size_t at) const { return std::bit_cast<float>(static_cast<uint32_t>(uint(at, 4))); }
};

bool isText(const Node& n, std::string_view text)
{
    return (n.kind == Kind::String || n.kind == Kind::Bytes) && n.text == text;
}

std::optional<int64_t> intOf(const ValueGraph& g, NodeId id)
{
    if (!g.valid(id))
        return std::nullopt;
    const Node& n = g[id];
    if (n.kind == Kind::Int)
        return n.i;
    if (n.kind == Kind::Bool)
        return n.flag ? 1 : 0;
    return std::nullopt;
}

std::optional<double> floatOf(const ValueGraph& g, NodeId id)
{
    if (!g.valid(id))
        return std::nullopt;
    const Node& n = g[id];
    if (n.kind == Kind::Float)
        return n.f;
    if (n.kind == Kind::Int)
        return static_cast<double>(n.i);
    return std::nullopt;
}

bool mentionsCuda(const KeyPath& path)
{
    for (const KeyPart& part : path) {
        const auto* s = std::get_if<std::string>(&part);
        if (!s || s->size() < 4)
            continue;
        std::string lower(*s);
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        if (lower.find("cuda") != std::string::npos)
            return true;
    }
    return false;
}

// numpy: the key array, pos, has_gauss and cached gaussian, whichever container held them.
std::optional<RngState> decodeNumpyParts(const Document& doc, NodeId keyNode, NodeId posNode, NodeId hasGaussNode,
                                         NodeId gaussNode)
{
    const ValueGraph& g = doc.graph;
    if (!g.valid(keyNode) || g[keyNode].kind != Kind::NdArray || g[keyNode].ref >= doc.arrays.size())
        return std::nullopt;
    const auto pos = intOf(g, posNode);
    if (!pos)
        return std::nullopt;
    const std::optional<int64_t> hasGauss = g.valid(hasGaussNode) ? intOf(g, hasGaussNode) : std::optional<int64_t>(0);
    const std::optional<double> gauss = g.valid(gaussNode) ? floatOf(g, gaussNode) : std::optional<double>(0.0);
    if (!hasGauss || !gauss)
        return std::nullopt;

    RngState s;
    s.kind = RngKind::NumpyMt19937;
    s.position = *pos;
    if (*hasGauss)
        s.gaussCache = *gauss;

    const NdArrayInfo& a = doc.arrays[g[keyNode].ref];
    std::vector<uint32_t> words;
    const bool uint32 = (a.dtype == "uint32" || a.dtype == ">uint32") && a.itemSize == 4;
    if (!uint32)
        addProblem(s, "the MT19937 key is a " + a.dtype + " array, not uint32");
    if (a.shape != std::vector<int64_t>{static_cast<int64_t>(kMtWords)}) {
        std::string shape;
        for (int64_t d : a.shape)
            shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        addProblem(s, "the MT19937 key has shape (" + shape + (a.shape.size() == 1 ? "," : "") + "), not (624,)");
    }
    if (!a.problem.empty())
        addProblem(s, a.problem);
    if (g.valid(a.data) && g[a.data].kind == Kind::Bytes && a.itemSize == 4) {
        const std::string& raw = g[a.data].text;
        const Bytes bytes(reinterpret_cast<const std::byte*>(raw.data()), raw.size());
        const FieldReader r{bytes, a.byteOrder == '>'};
        for (std::size_t at = 0; at + 4 <= raw.size(); at += 4)
            words.push_back(static_cast<uint32_t>(r.uint(at, 4)));
    } else if (uint32) {
        addProblem(s, "the MT19937 key array holds no raw bytes");
    }
    if (!words.empty() && allZero(words))
        addProblem(s, "the MT19937 key is all zero (the generator would only produce zeros)");
    if (*pos < 0 || *pos > static_cast<int64_t>(kMtWords))
        addProblem(s, "pos " + std::to_string(*pos) + " is outside 0..624");

    Fnv64 h;
    h.text("numpy");
    h.u64(words.size());
    for (uint32_t w : words)
        h.u32(w);
    h.u64(static_cast<uint64_t>(*pos));
    h.optionalF64(s.gaussCache);
    s.fingerprint = h.hex();
    return s;
}

// torch's MT19937 (aten/src/ATen/core/MT19937RNGEngine.h): seeded from the low 32 bits of the
// seed with Knuth's multiplier, left = 1 and next = 0, so the first draw twists; each later twist
// comes after 624 draws. A saved table is the seed's table after k twists and `next` words read
// from it: k = 0 only right after seeding (next 0), else the words drawn are 624 (k - 1) + next.
// The replay stops after 2^20 words (1,681 twists, about a millisecond, paid on every rank's state
// of every checkpoint): a generator that drew more is not counted.
std::optional<uint64_t> wordsDrawnSinceSeed(uint64_t seed, const std::vector<uint32_t>& table, uint64_t next)
{
    constexpr uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrixA = 0x9908b0dfu;
    constexpr std::size_t kShift = 397;
    std::vector<uint32_t> mt(kMtWords);
    mt[0] = static_cast<uint32_t>(seed);
    for (std::size_t j = 1; j < kMtWords; ++j)
        mt[j] = 1812433253u * (mt[j - 1] ^ (mt[j - 1] >> 30)) + static_cast<uint32_t>(j);
    if (mt == table)
        return next == 0 ? std::optional<uint64_t>(0) : std::nullopt;
    constexpr uint64_t kMaxTwists = ((uint64_t(1) << 20) / kMtWords) + 1;
    auto mix = [&](std::size_t k, std::size_t k1, std::size_t km) {
        const uint32_t y = (mt[k] & kUpper) | (mt[k1] & kLower);
        mt[k] = mt[km] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
    };
    for (uint64_t twists = 1; twists <= kMaxTwists; ++twists) {
        std::size_t k = 0;
        for (; k < kMtWords - kShift; ++k)
            mix(k, k + 1, k + kShift);
        for (; k < kMtWords - 1; ++k)
            mix(k, k + 1, k + kShift - kMtWords);
        mix(kMtWords - 1, 0, kShift - 1);
        if (mt == table)
            return next >= 1 && next <= kMtWords ? std::optional<uint64_t>(kMtWords * (twists - 1) + next) : std::nullopt;
    }
    return std::nullopt;
}

RngState decodeTorchCpu(const FieldReader& r, bool legacy)
{
    RngState s;
    s.kind = RngKind::TorchCpu;
    const uint64_t seed = r.u64(0);
    const int32_t left = r.i32(8);
    const int32_t seeded = r.i32(12);
    const uint64_t next = r.u64(16);
    std::vector<uint64_t> raw(kMtWords);
    std::vector<uint32_t> words(kMtWords);
    for (std::size_t i = 0; i < kMtWords; ++i) {
        raw[i] = r.u64(24 + 8 * i);
        words[i] = static_cast<uint32_t>(raw[i]);
    }
    const double normalX = r.f64(5016), normalY = r.f64(5024), normalRho = r.f64(5032);
    const bool normalValid = r.i32(5040) != 0;
    std::optional<float> floatNormal;
    if (!legacy && r.uint(5052, 1) != 0)
        floatNormal = r.f32(5048);

    s.seed = seed;
    s.position = next <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(next) : -1;
    if (normalValid) {
        // CPUGeneratorImpl::set_state: the current layout stores the sample itself in normal_y;
        // the legacy one keeps Box-Muller intermediates and the sample is rho * sin(2 pi x).
        s.gaussCache = legacy ? normalRho * std::sin(2.0 * std::numbers::pi * normalX) : normalY;
    }

    // The conditions at::mt19937::is_valid() checks on set_state, then what would make the
    // state unusable although torch accepts it.
    if (seeded == 0)
        addProblem(s, "the seeded flag is 0 (torch.set_rng_state rejects it)");
    if (left < 1 || left > static_cast<int32_t>(kMtWords))
        addProblem(s, "left " + std::to_string(left) + " is outside 1..624");
    if (next > kMtWords)
        addProblem(s, "next " + std::to_string(next) + " is outside 0..624");
    else if (left >= 1 && left <= static_cast<int32_t>(kMtWords) && next + static_cast<uint64_t>(left) > kMtWords + 1)
        addProblem(s, "left " + std::to_string(left) + " + next " + std::to_string(next)
                          + " exceeds 625: draws would read past the state");
    const auto wide = std::find_if(raw.begin(), raw.end(), [](uint64_t w) { return (w >> 32) != 0; });
    if (wide != raw.end())
        addProblem(s, "state word " + std::to_string(wide - raw.begin()) + " does not fit 32 bits");
    if (allZero(words))
        addProblem(s, "the MT19937 key is all zero (the generator would only produce zeros)");
    if (s.problem.empty())
        s.drawnSinceSeed = wordsDrawnSinceSeed(seed, words, next);

    Fnv64 h;
    h.text("torch_cpu");
    h.u64(seed);
    h.u32(static_cast<uint32_t>(left));
    h.u32(seeded != 0 ? 1 : 0);
    h.u64(next);
    for (uint64_t w : raw)
        h.u64(w);
    h.optionalF64(s.gaussCache);
    h.u32(floatNormal ? 1 : 0);
    if (floatNormal)
        h.u32(std::bit_cast<uint32_t>(*floatNormal));
    s.fingerprint = h.hex();
    return s;
}

RngState decodeTorchCuda(const FieldReader& r)
{
    RngState s;
    s.kind = RngKind::TorchCuda;
    const std::size_t at = r.data.size() - 16; // seed, offset at the end of either form
    s.seed = r.u64(at);
    const int64_t offset = r.i64(at + 8);
    s.offset = static_cast<uint64_t>(offset);
    if (offset < 0)
        addProblem(s, "the philox offset " + std::to_string(offset) + " is negative");
    else if (offset % 4 != 0)
        addProblem(s, "the philox offset " + std::to_string(offset) + " is not a multiple of 4");
    Fnv64 h;
    h.text("torch_cuda");
    h.u64(*s.seed);
    h.u64(*s.offset);
    s.fingerprint = h.hex();
    return s;
}

} // namespace

const char* rngKindName(RngKind kind)
{
    switch (kind) {
    case RngKind::PythonMt19937: return "python";
    case RngKind::NumpyMt19937: return "numpy";
    case RngKind::TorchCpu: return "torch_cpu";
    case RngKind::TorchCuda: return "torch_cuda";
    }
    return "unknown";
}

std::optional<RngState> decodePythonRandom(const ValueGraph& g, NodeId node)
{
    // (VERSION, (624 words..., index), gauss_next); VERSION 3 (Python 3) or 2 (Python 2.x,
    // whose words Python 3 reduces modulo 2**32 on setstate).
    if (!g.valid(node) || g[node].kind != Kind::Tuple || g[node].items.size() != 3)
        return std::nullopt;
    const Node& outer = g[node];
    const auto version = intOf(g, outer.items[0]);
    if (!version || (*version != 2 && *version != 3) || g[outer.items[0]].kind != Kind::Int)
        return std::nullopt;
    if (!g.valid(outer.items[1]) || g[outer.items[1]].kind != Kind::Tuple
        || g[outer.items[1]].items.size() != kMtWords + 1)
        return std::nullopt;
    if (!g.valid(outer.items[2]) || (g[outer.items[2]].kind != Kind::None && g[outer.items[2]].kind != Kind::Float))
        return std::nullopt;
    const auto& inner = g[outer.items[1]].items;
    for (NodeId w : inner) {
        if (!g.valid(w) || (g[w].kind != Kind::Int && g[w].kind != Kind::BigInt))
            return std::nullopt;
    }

    RngState s;
    s.kind = RngKind::PythonMt19937;
    std::vector<uint32_t> words(kMtWords);
    std::string wide;
    for (std::size_t i = 0; i < kMtWords; ++i) {
        const Node& w = g[inner[i]];
        const bool fits = w.kind == Kind::Int && (*version == 2 ? w.i >= INT32_MIN : w.i >= 0) && w.i <= UINT32_MAX;
        if (!fits && wide.empty())
            wide = "state word " + std::to_string(i) + " (" + (w.kind == Kind::Int ? std::to_string(w.i) : w.text)
                 + ") does not fit 32 bits";
        words[i] = w.kind == Kind::Int ? static_cast<uint32_t>(w.i) : 0;
    }
    const Node& index = g[inner[kMtWords]];
    if (index.kind == Kind::Int)
        s.position = index.i;
    if (g[outer.items[2]].kind == Kind::Float)
        s.gaussCache = g[outer.items[2]].f;

    if (!wide.empty())
        addProblem(s, wide);
    if (allZero(words))
        addProblem(s, "the MT19937 key is all zero (the generator would only produce zeros)");
    if (!s.position || *s.position < 0 || *s.position > static_cast<int64_t>(kMtWords))
        addProblem(s, "index " + (index.kind == Kind::Int ? std::to_string(index.i) : index.text) + " is outside 0..624");

    Fnv64 h;
    h.text("python");
    h.u64(kMtWords);
    for (uint32_t w : words)
        h.u32(w);
    h.u64(static_cast<uint64_t>(s.position.value_or(-1)));
    h.optionalF64(s.gaussCache);
    s.fingerprint = h.hex();
    return s;
}

std::optional<RngState> decodeNumpyRandom(const Document& doc, NodeId node)
{
    const ValueGraph& g = doc.graph;
    if (!g.valid(node))
        return std::nullopt;
    const Node& n = g[node];
    // get_state() / get_state(legacy=True): ('MT19937', key, pos, has_gauss, cached_gaussian);
    // set_state also takes the 3-tuple without the gaussian.
    if (n.kind == Kind::Tuple && (n.items.size() == 5 || n.items.size() == 3)) {
        if (!g.valid(n.items[0]) || !isText(g[n.items[0]], "MT19937"))
            return std::nullopt;
        const bool full = n.items.size() == 5;
        return decodeNumpyParts(doc, n.items[1], n.items[2], full ? n.items[3] : kNoNode, full ? n.items[4] : kNoNode);
    }
    // get_state(legacy=False) / RandomState bit generator state:
    // {'bit_generator': 'MT19937', 'state': {'key': key, 'pos': pos}, 'has_gauss': h, 'gauss': g}
    if (n.kind == Kind::Dict) {
        const NodeId name = g.get(node, "bit_generator");
        const NodeId state = g.get(node, "state");
        if (!g.valid(name) || !isText(g[name], "MT19937") || !g.valid(state) || g[state].kind != Kind::Dict)
            return std::nullopt;
        return decodeNumpyParts(doc, g.get(state, "key"), g.get(state, "pos"), g.get(node, "has_gauss"),
                                g.get(node, "gauss"));
    }
    return std::nullopt;
}

std::optional<RngState> decodeTorchGenerator(const CheckpointFile& file, const TensorInfo& t, bool cudaHint)
{
    if (t.dtype != DType::UInt8 || t.shape.size() != 1 || t.layout != TensorLayout::Strided)
        return std::nullopt;
    const auto size = static_cast<std::size_t>(std::max<int64_t>(t.shape[0], 0));
    const bool cpu = size == kTorchCpuSize || size == kTorchCpuLegacySize;
    const bool cuda = cudaHint && (size == kCudaOldSize || size == kCudaNewSize);
    if (!cpu && !cuda)
        return std::nullopt;

    RngState s;
    s.kind = cpu ? RngKind::TorchCpu : RngKind::TorchCuda;
    if (!t.hasData()) {
        addProblem(s, t.problem.empty() ? "the tensor has no bytes in the file" : t.problem);
        return s;
    }
    if (t.stride.size() != 1 || t.stride[0] != 1) {
        addProblem(s, "the tensor is not contiguous");
        return s;
    }
    std::vector<std::byte> scratch;
    Bytes region;
    try {
        region = file.tensorRegion(t, scratch);
    } catch (const std::exception& e) {
        addProblem(s, std::string("the tensor's bytes cannot be read: ") + e.what());
        return s;
    }
    if (region.size() != size) {
        addProblem(s, "the tensor holds " + std::to_string(region.size()) + " bytes, expected " + std::to_string(size));
        return s;
    }
    // The struct is the saving machine's native layout; a byteorder=big archive came from a
    // big-endian machine.
    const FieldReader r{region, file.bigEndian()};
    return cpu ? decodeTorchCpu(r, size == kTorchCpuLegacySize) : decodeTorchCuda(r);
}

std::optional<RngState> decodeTorchCpuBytes(Bytes data)
{
    if (data.size() != kTorchCpuSize && data.size() != kTorchCpuLegacySize)
        return std::nullopt;
    const FieldReader r{data, std::endian::native == std::endian::big};
    return decodeTorchCpu(r, data.size() == kTorchCpuLegacySize);
}

std::vector<RngState> findRngStates(const CheckpointFile& file)
{
    std::vector<RngState> out;
    const ValueGraph& g = file.graph();
    const Document& doc = file.document();
    walkObject(g, file.root(), [&](const WalkVisit& v) {
        if (v.repeat)
            return;
        const Node& n = g[v.node];
        std::optional<RngState> found;
        switch (n.kind) {
        case Kind::Tuple:
            found = decodePythonRandom(g, v.node);
            if (!found)
                found = decodeNumpyRandom(doc, v.node);
            break;
        case Kind::Dict:
            found = decodeNumpyRandom(doc, v.node);
            break;
        case Kind::Tensor:
            if (n.ref < file.tensors().size())
                found = decodeTorchGenerator(file, file.tensors()[n.ref], mentionsCuda(v.path));
            break;
        default:
            break;
        }
        if (found) {
            found->key = v.path;
            out.push_back(std::move(*found));
        }
    });
    return out;
}

} // namespace ckpt
