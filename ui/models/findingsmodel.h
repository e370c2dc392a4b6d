// SPDX-License-Identifier: MIT
// Findings as a table: one row per finding of what is open (or of one checkpoint, on the
// Overview page), with where it points so a click can jump there.
#pragma once

#include "ckpt/findings/finding.h"

#include <QAbstractTableModel>

#include <vector>

struct FindingRow {
    int runId = 0;
    int checkpointIndex = -1; // -1: about the run as a whole
    QString checkpointName;   // "checkpoint-0000300", "" for the run
    ckpt::Finding finding;
    QString root; // the opened run's folder: paths below it are shown relative to it
};

class FindingsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Severity, Component, Checkpoint, Rule, Where, Message, ColumnCount }; // Message last: it stretches
    enum Role {
        SortRole = Qt::UserRole,
        SeverityRole,        // int: ckpt::Severity
        ComponentRole,       // int: ckpt::Component
        RunIdRole,           // int
        CheckpointIndexRole, // int
    };

    explicit FindingsModel(QObject* parent = nullptr);

    void setFindings(std::vector<FindingRow> rows);
    const FindingRow& rowAt(int row) const { return m_rows[static_cast<std::size_t>(row)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<FindingRow> m_rows;
};
