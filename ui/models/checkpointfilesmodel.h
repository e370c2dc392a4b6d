// SPDX-License-Identifier: MIT
// The Overview's file table: every file of one checkpoint with its role, rank, size and what the
// manifest audit says about it (verified, a finding's rule, or why it was not checked). Files the
// manifest lists but the disk lacks get a row too.
#pragma once

#include <QAbstractTableModel>

#include <vector>

struct RunCheckpointData;

class CheckpointFilesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { File, Role, Rank, Size, Audit, ColumnCount };
    enum DataRole {
        SortRole = Qt::UserRole,
        PathRole,          // QString: absolute path
        AuditSeverityRole, // int: -1 verified or not checked, else ckpt::Severity
    };

    explicit CheckpointFilesModel(QObject* parent = nullptr);

    /// `audited`: the run's audit has arrived; `note`: why there is none (shown for every file).
    void setCheckpoint(const RunCheckpointData* checkpoint, bool audited, const QString& note);
    int rowOfPath(const QString& path) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString path, name, role;
        int rank = -1;
        qint64 size = -1;
        QString audit;
        int severity = -1;
    };
    std::vector<Row> m_rows;
};
