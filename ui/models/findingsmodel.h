// SPDX-License-Identifier: MIT
// Findings of what is open (or of one checkpoint, on the Overview page), with where each points so
// a click can jump there: one row per finding, or (grouped, the Findings dock) one row per group of
// findings that say the same thing (core's ckpt/findings/finding_groups.h) with its instances as
// children. A group of one is its finding, without children.
#pragma once

#include "ckpt/findings/finding.h"

#include <QAbstractItemModel>

#include <vector>

struct FindingRow {
    int runId = 0;
    int checkpointIndex = -1; // -1: about the run as a whole
    QString checkpointName;   // "checkpoint-0000300", "" for the run
    ckpt::Finding finding;
    QString root; // the opened run's folder: paths below it are shown relative to it
};

class FindingsModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Severity, Component, Checkpoint, Rule, Where, Message, ColumnCount }; // Message last: it stretches
    enum Role {
        SortRole = Qt::UserRole,
        SeverityRole,        // int: ckpt::Severity
        ComponentRole,       // int: ckpt::Component
        RunIdRole,           // int
        CheckpointIndexRole, // int
        MemberCountRole,     // int: the rows a row stands for (1 for a finding)
        FindingCountRole,    // int: the distinct findings among them (a pair's finding, listed under
                             // both of its checkpoints, counts once)
    };

    explicit FindingsModel(QObject* parent = nullptr);

    /// Grouped: one top-level row per group, sorted by severity then the recovery guide's order.
    void setGrouped(bool grouped);
    bool grouped() const { return m_grouped; }
    void setFindings(std::vector<FindingRow> rows);
    /// The finding a row stands for: a group's first instance (oldest checkpoint first).
    const FindingRow& rowAt(const QModelIndex& index) const;
    const FindingRow& rowAt(int row) const { return rowAt(index(row, 0)); }
    /// Every finding a row stands for: a group's instances, oldest checkpoint first, or the one.
    std::vector<const FindingRow*> membersOf(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Group {
        std::vector<int> members; // into m_rows, oldest checkpoint first
        QString where;            // "3 findings: a ... b", "pair: a → b"
        int distinct = 1;         // findings, a pair's one listed under both checkpoints counted once
    };
    void regroup();
    // The finding of a top-level row (flat: that finding; grouped: the group's first) or of a child.
    int findingOf(const QModelIndex& index) const;
    static constexpr quintptr kTopLevel = ~quintptr(0);

    std::vector<FindingRow> m_rows;
    bool m_grouped = false;
    std::vector<Group> m_groups;
};
