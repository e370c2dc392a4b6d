// SPDX-License-Identifier: MIT
// Sorting on TensorTableModel::SortRole (numbers sort as numbers) and filtering by key text.
#pragma once

#include <QSortFilterProxyModel>

class TensorProxyModel final : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TensorProxyModel(QObject* parent = nullptr);

    /// Rows whose key contains `text` (case-insensitive); empty shows every row.
    void setKeyFilter(const QString& text);
};
