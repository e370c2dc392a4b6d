// SPDX-License-Identifier: MIT
// Members of an uncompressed tar archive named as paths below the archive file, the way a user
// browses into it: "exp/megatron_gpt.nemo/model_weights.ckpt" is the member ./model_weights.ckpt of
// the .nemo file exp/megatron_gpt.nemo. MappedFile and readBoundedFile open such paths, so every
// reader (torch.save archives, YAML configs, statistics, the diff) reads a NeMo archive's members in
// place, without extracting them. A path that exists on disk is always the file itself.
#pragma once

#include "ckpt/io/read_only_file.h"
#include "ckpt/io/tar_index.h"

#include <optional>
#include <string>
#include <vector>

namespace ckpt {

struct ArchiveMemberRef {
    std::string archive; // the tar file on disk
    TarMember member;    // offset 0 in a compressed archive: its bytes exist only decompressed
    bool compressed = false; // a gzip (or xz, bzip2) tar: NeMo wrote "w:gz" before 1.7
};

/// Past this size a member of a compressed archive is not decompressed into memory.
inline constexpr uint64_t kDecompressedMemberLimit = uint64_t{4} << 30;

/// The member `path` names, or nullopt when `path` exists on disk or no file above it is a tar
/// archive. Throws FormatError when the archive above it cannot be indexed (a truncated or
/// corrupted tar) or holds no such regular member.
std::optional<ArchiveMemberRef> archiveMember(const std::string& path);

/// The paths ("<archive>/<member>") of the regular members of the tar archive at `archive` (plain or
/// compressed, read through libarchive), in the archive's order, "./" prefixes dropped. Throws
/// FormatError when it is neither.
std::vector<std::string> archiveMemberPaths(const std::string& archive);

/// Whether the regular file at `path` starts with a tar header.
bool isTarFile(const std::string& path);

/// A member of a compressed archive decompressed into an anonymous in-memory file (memfd), read
/// and mapped like a file on disk. Throws FormatError when the member is larger than
/// kDecompressedMemberLimit or the archive cannot be read.
FileDescriptor decompressMember(const ArchiveMemberRef& ref);

} // namespace ckpt
