// SPDX-License-Identifier: MIT
// The Overview's metadata: progress counters (C), data cursor (D) and environment (E) of one
// checkpoint, a section each, every value with the file and key it was read from.
#pragma once

#include <QAbstractItemModel>

#include <memory>
#include <vector>

namespace ckpt {
struct TrainingState;
}

class StateFieldsModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Name, Value, Where, ColumnCount };

    explicit StateFieldsModel(QObject* parent = nullptr);

    void setState(std::shared_ptr<const ckpt::TrainingState> state);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString name, value, where;
    };
    struct Section {
        QString title;
        std::vector<Row> rows;
    };
    std::vector<Section> m_sections;
};
