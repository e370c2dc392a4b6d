// SPDX-License-Identifier: MIT
// The run browser: one top-level row per open run, its checkpoints below ordered by step, with
// badges (latest, best, incomplete) and the worst severity of their findings. Owns the runs'
// data; RunLoader's results are applied here as they arrive.
#pragma once

#include "ui/rundata.h"

#include <QAbstractItemModel>

#include <vector>

class RunBrowserModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Name, Step, Marks, Findings, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole,
        PathRole,            // QString: run or checkpoint path
        RunIdRole,           // int
        CheckpointIndexRole, // int: -1 on a run row
        WorstSeverityRole,   // int: -1 none, else ckpt::Severity
    };

    explicit RunBrowserModel(QObject* parent = nullptr);

    void addRun(const RunDataPtr& run);
    void removeRun(int runId);
    void clear();
    void applyState(int runId, int index, std::shared_ptr<const ckpt::TrainingState> state, const QString& error,
                    std::vector<std::pair<std::string, uint64_t>> sizes);
    void applyAudit(int runId, PlacedFindings* findings, const QString& note);

    const std::vector<RunDataPtr>& runs() const { return m_runs; }
    RunDataPtr run(int runId) const;
    QStringList runPaths() const;
    QModelIndex runIndex(int runId) const;
    QModelIndex checkpointIndex(int runId, int index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    /// A run's findings changed (a state or the audit arrived).
    void findingsChanged(int runId);

private:
    int rowOfRun(int runId) const;
    QVariant runData(const RunData& run, int column, int role) const;
    QVariant checkpointData(const RunCheckpointData& checkpoint, int column, int role) const;

    std::vector<RunDataPtr> m_runs;
};
