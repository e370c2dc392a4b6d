// SPDX-License-Identifier: MIT
// Random-generator states saved in checkpoints (HF Trainer rng_state.pth, accelerate, Lightning,
// hand-rolled {"rng": ...} dicts): Python random.getstate(), numpy get_state(), torch CPU and
// CUDA generator tensors. Recognised by structure, decoded without Python, checked for the
// conditions their set_state would reject (or that would make them degenerate), and hashed so
// that two saves of the same generator state can be compared (formats.md §4.1-4.3).
#pragma once

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/key_path.h"
#include "ckpt/pickle/tensor_info.h"
#include "ckpt/pickle/value_graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckpt {

enum class RngKind : uint8_t { PythonMt19937, NumpyMt19937, TorchCpu, TorchCuda };

/// "python", "numpy", "torch_cpu", "torch_cuda".
const char* rngKindName(RngKind kind);

struct RngState {
    RngKind kind = RngKind::PythonMt19937;
    KeyPath key;                      // where it was found, e.g. ["rng", "torch"] or ["cuda", 0]
    /// 16 lowercase hex digits: FNV-1a 64 over the kind and every field of the generator state
    /// (MT words, position, seed, cached normal samples; CUDA: seed and offset). Equal states
    /// give equal fingerprints whatever the container (zip or legacy file, 816- or 16-byte
    /// CUDA form). Empty only when the state's bytes could not be read at all.
    std::string fingerprint;
    bool valid = true;
    std::string problem;              // why it is not a usable generator state; empty when valid
    std::optional<uint64_t> seed;     // torch CPU: the_initial_seed; CUDA: seed (MT19937 stores none)
    std::optional<uint64_t> offset;   // CUDA philox offset
    /// MT19937 index: python the last item of the inner tuple (624 right after seeding), numpy
    /// `pos`, torch CPU the stored `next` field (0 right after seeding, when `left` is 1).
    std::optional<int64_t> position;
    /// python gauss_next, numpy cached_gaussian when has_gauss, torch CPU the cached double
    /// normal sample when normal_is_valid.
    std::optional<double> gaussCache;
    /// torch CPU: how many 32-bit words the generator has drawn since it was seeded with `seed`,
    /// found by replaying MT19937 from the seed (aten MT19937RNGEngine.h); empty beyond 2^20
    /// words, or when the state is not one the seed leads to (set_rng_state of another run's).
    std::optional<uint64_t> drawnSinceSeed;
};

/// Every generator state found anywhere under the file's root, recognised by structure (not
/// by key names): Python random.getstate() tuples (3, (625 ints), gauss), numpy get_state()
/// tuples ('MT19937', uint32 ndarray[624], pos, has_gauss, cached) and the dict form of
/// get_state(legacy=False), uint8 tensors of 5056 bytes (torch CPU; also the 5048-byte legacy
/// layout), of 816 or 16 bytes when under a key mentioning cuda (torch CUDA), and lists of such
/// tensors (HF/accelerate "cuda" lists, one per device). In walk order (torch.load's iteration
/// order); a state reachable under several keys is reported under each.
std::vector<RngState> findRngStates(const CheckpointFile& file);

/// Decoders usable on their own (return nullopt when the node is not that kind). The returned
/// state's key is empty: findRngStates fills it in.
std::optional<RngState> decodePythonRandom(const ValueGraph& g, NodeId node);
std::optional<RngState> decodeNumpyRandom(const Document& doc, NodeId node);
/// A uint8 1-D tensor of 5056/5048 bytes (torch CPU), or with cudaHint of 816/16 bytes (CUDA).
std::optional<RngState> decodeTorchGenerator(const CheckpointFile& file, const TensorInfo& t, bool cudaHint);
/// The bytes of a torch CPU generator state as `torch.get_rng_state()` returns them on this machine
/// (5056 bytes, or the 5048-byte legacy layout); nullopt for any other size. For states that come
/// from LibTorch at run time rather than from a file (the validator's generator after a replay).
std::optional<RngState> decodeTorchCpuBytes(Bytes data);

} // namespace ckpt
