// SPDX-License-Identifier: MIT
// The RNG & data cursor page's table, built without a widget: every generator state, sampler
// field and progress counter as a row, one column per rank of one checkpoint (or one column
// per checkpoint when comparing), and whether the values of a row disagree.
#pragma once

#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace ckpt {
struct TrainingState;
}

struct StateGrid {
    struct Row {
        QString part;         // "R", "D", "C"
        QString name;         // "python (rng/python) fingerprint", "sampler.position", "epoch [manifest.json]"
        QStringList values;   // one per column; empty where the column has no such value
        QStringList sources;  // "file: key" per column
        bool differs = false; // the non-empty values are not all equal (or disagree with a sibling row)
        QString note;         // a concern beyond differences: ranks holding the same generator state
    };
    QStringList columns;
    std::vector<Row> rows;
};

/// One column per rank; values saved once for the whole checkpoint (manifest, optimizer file)
/// go into a first "checkpoint" column.
StateGrid stateGridByRank(const ckpt::TrainingState& state);

/// One column per checkpoint (`labels`, same length as `states`); the rank goes into the row name.
StateGrid stateGridByCheckpoint(const std::vector<std::shared_ptr<const ckpt::TrainingState>>& states,
                                const QStringList& labels);
