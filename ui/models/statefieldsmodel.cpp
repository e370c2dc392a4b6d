// SPDX-License-Identifier: MIT
#include "ui/models/statefieldsmodel.h"

#include "ckpt/state/training_state.h"
#include "ui/fieldlabels.h"
#include "ui/textformat.h"

namespace {

constexpr quintptr kSectionRow = 0; // children carry section row + 1

} // namespace

StateFieldsModel::StateFieldsModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void StateFieldsModel::setState(std::shared_ptr<const ckpt::TrainingState> state)
{
    beginResetModel();
    m_sections.clear();
    if (state) {
        const std::pair<QString, const std::vector<ckpt::StateField>*> parts[] = {
            {tr("Progress counters (C)"), &state->progress},
            {tr("Data cursor (D)"), &state->data},
            {tr("Environment (E)"), &state->environment},
        };
        for (const auto& [title, fields] : parts) {
            Section section{title, {}};
            // Repeated names (epoch in two files, sampler.* per rank) carry their file, as in the compare view.
            const std::vector<std::string> labels = fieldLabels(*fields);
            for (std::size_t i = 0; i < fields->size(); ++i) {
                const ckpt::StateField& field = (*fields)[i];
                section.rows.push_back({fromUtf8(labels[i]), fromUtf8(field.value), formatProvenance(field.from)});
            }
            if (section.rows.empty())
                section.rows.push_back({tr("(none saved)"), QString(), QString()});
            m_sections.push_back(std::move(section));
        }
    }
    endResetModel();
}

QModelIndex StateFieldsModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kSectionRow);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex StateFieldsModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kSectionRow)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kSectionRow);
}

int StateFieldsModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_sections.size());
    if (parent.column() > 0 || parent.internalId() != kSectionRow)
        return 0;
    return static_cast<int>(m_sections[static_cast<std::size_t>(parent.row())].rows.size());
}

int StateFieldsModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant StateFieldsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return {};
    if (index.internalId() == kSectionRow)
        return index.column() == Name ? m_sections[static_cast<std::size_t>(index.row())].title : QVariant();
    const Row& row = m_sections[index.internalId() - 1].rows[static_cast<std::size_t>(index.row())];
    switch (static_cast<Column>(index.column())) {
    case Name:
        return row.name;
    case Value:
        return row.value;
    case Where:
        return row.where;
    case ColumnCount:
        break;
    }
    return {};
}

QVariant StateFieldsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case Name:
            return tr("Field");
        case Value:
            return tr("Value");
        case Where:
            return tr("Read from");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case Name:
            return tr("C: counters a resume must restore; D: where the data loader stands; E: versions, config and data hashes");
        case Value:
            return tr("As saved (numbers in their shortest round-trip form)");
        case Where:
            return tr("The file and key path the value was read from");
        case ColumnCount:
            break;
        }
    }
    return {};
}
