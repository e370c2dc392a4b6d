// SPDX-License-Identifier: MIT
// Where each member of an uncompressed tar archive lies in the file. NeMo's .nemo files are such
// tars (nemo/core/connectors/save_restore_connector.py _make_nemo_file_from_folder:
// tarfile.open(filename, "w:") since NeMo 1.7) holding a model_weights.ckpt of many gigabytes; with
// its offset the torch.save archive inside is mapped in place like any other file, never copied.
// libarchive reads members as streams and does not say where their bytes start, hence this
// reader of the POSIX ustar, GNU and pax header forms Python's tarfile writes.
#pragma once

#include "ckpt/io/byte_reader.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ckpt {

struct TarMember {
    std::string name;     // as stored, "./model_weights.ckpt"; pax `path` and GNU long names applied
    char type = '0';      // '0' file, '5' directory, '2' symlink...
    uint64_t offset = 0;  // of its data in the archive
    uint64_t size = 0;
};

/// Every member of `archive`, an uncompressed tar, in order. Throws FormatError naming the reason
/// when it is not one (a header's checksum, a size past the end), LimitError past 1,000,000 members.
std::vector<TarMember> tarIndex(Bytes archive);

/// Whether `head` (at least the first 512 bytes) is a tar header: its checksum holds.
bool looksLikeTar(Bytes head);

} // namespace ckpt
