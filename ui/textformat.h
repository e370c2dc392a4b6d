// SPDX-License-Identifier: MIT
// Display strings for the core's values, shared by the models so every view spells sizes,
// shapes and key paths the way `ckpt` prints them.
#pragma once

#include "ckpt/formats/key_path.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <string>
#include <vector>

namespace ckpt {
struct Finding;
struct TensorInfo;
}

/// "216 B", "4.79 KiB", "27.6 KiB", "1.2 GiB" (the CLI's humanBytes).
QString humanBytes(uint64_t bytes);

/// "[2, 3]"; "[]" for a scalar.
QString formatShape(const std::vector<int64_t>& shape);

/// "optimizer.state.0.exp_avg"; "(root)" for the empty path.
QString formatKey(const ckpt::KeyPath& path);

/// UTF-8 from the core; invalid sequences become U+FFFD.
inline QString fromUtf8(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// "float32 [3, 2, 3, 3] 216 B" plus layout, device and problem when they matter.
QString tensorSummary(const ckpt::TensorInfo& tensor);

namespace ckpt {
struct Provenance;
}

/// The folder a checkpoint's files are named relative to: the checkpoint's folder; for one file, its
/// folder, or the folder above when the files lie in several (NeMo's mp_rank_TT/ copies of one .ckpt);
/// for an archive (a .nemo), the archive, its members named below it.
QString checkpointFileBase(const QString& checkpointPath, const QStringList& files);
/// `file` as a checkpoint's pages name it: relative to checkpointFileBase().
QString nameInCheckpoint(const QString& base, const QString& file);

/// "optimizer.pt: global_step": the file's name and the key path inside it.
QString formatProvenance(const ckpt::Provenance& from);

/// The verdict the CLI and the reports open with (core's verdictOf), as plain text: "Verdict:
/// nothing inconsistent found (86 rules over 4 checkpoints); ..." or the errors and warnings one
/// line each. `order` names the checkpoints oldest first, for "first ... last".
QString verdictText(const std::vector<ckpt::Finding>& findings, std::size_t checkpoints, const std::vector<std::string>& order = {});
