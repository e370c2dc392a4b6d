// SPDX-License-Identifier: MIT
// Every tensor of one file with its key path, one row each (aliases included, marked in Note).
#pragma once

#include <QAbstractTableModel>

#include <memory>

namespace ckpt {
class CheckpointFile;
}

class TensorTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Key, DType, Shape, Numel, Size, Layout, Device, Note, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole, // numbers for Shape (rank), Numel and Size; text otherwise
    };
    Q_ENUM(Column)

    explicit TensorTableModel(QObject* parent = nullptr);
    ~TensorTableModel() override;

    void setFile(std::shared_ptr<const ckpt::CheckpointFile> file);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString displayText(int row, Column column) const;
    QVariant sortValue(int row, Column column) const;

    std::shared_ptr<const ckpt::CheckpointFile> m_file;
};
