// SPDX-License-Identifier: MIT
// Shared by the fuzz entry points: which exceptions count as a clean refusal, and a private
// scratch directory for the readers that take a path (DCP folders, manifests, whole files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ckpt::fuzz {

/// A directory created once per process under $TMPDIR (or /tmp), removed at exit.
const std::string& scratchDir();

/// Writes `size` bytes to `scratchDir()/relative` (creating parent folders) and returns the path.
std::string writeScratch(const std::string& relative, const uint8_t* data, std::size_t size);

/// Runs `body`; FormatError, LimitError, OpenError and CancelledError are the product's clean
/// refusals and are swallowed. Anything else (std::out_of_range from a stray stoi, a json
/// exception, bad_alloc) escapes and the fuzzer reports it: a user would see a message that
/// names neither the file nor the reason.
template<typename Body>
void refusalsAreFine(Body&& body);

} // namespace ckpt::fuzz

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/io/errors.h"

template<typename Body>
void ckpt::fuzz::refusalsAreFine(Body&& body)
{
    try {
        body();
    } catch (const ckpt::FormatError&) {
    } catch (const ckpt::OpenError&) {
    } catch (const ckpt::CancelledError&) {
    }
}
