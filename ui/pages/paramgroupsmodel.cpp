// SPDX-License-Identifier: MIT
#include "ui/pages/paramgroupsmodel.h"

#include "ckpt/state/training_state.h"
#include "ui/textformat.h"

#include <QCoreApplication>

namespace {

// What each common hyperparameter does, for the header tooltips.
QString explain(const QString& name)
{
    static const std::pair<const char*, const char*> known[] = {
        {"lr", QT_TRANSLATE_NOOP("ParamGroupsModel", "Learning rate the next step will use (the scheduler writes it here)")},
        {"initial_lr", QT_TRANSLATE_NOOP("ParamGroupsModel", "Learning rate the scheduler started from (its base_lrs)")},
        {"betas", QT_TRANSLATE_NOOP("ParamGroupsModel", "Adam's decay rates of the first and second moment averages")},
        {"eps", QT_TRANSLATE_NOOP("ParamGroupsModel", "Added to the denominator for numerical stability")},
        {"weight_decay", QT_TRANSLATE_NOOP("ParamGroupsModel", "L2 penalty (AdamW: decoupled weight decay)")},
        {"momentum", QT_TRANSLATE_NOOP("ParamGroupsModel", "SGD/RMSprop momentum factor")},
        {"dampening", QT_TRANSLATE_NOOP("ParamGroupsModel", "SGD: dampening of the momentum")},
        {"nesterov", QT_TRANSLATE_NOOP("ParamGroupsModel", "SGD: Nesterov momentum")},
        {"amsgrad", QT_TRANSLATE_NOOP("ParamGroupsModel", "Adam: keep the maximum of the second moments (max_exp_avg_sq)")},
        {"maximize", QT_TRANSLATE_NOOP("ParamGroupsModel", "Maximise the objective instead of minimising it")},
        {"foreach", QT_TRANSLATE_NOOP("ParamGroupsModel", "Implementation choice: the multi-tensor (foreach) kernels")},
        {"capturable", QT_TRANSLATE_NOOP("ParamGroupsModel", "Adam: state kept on the device for CUDA graph capture")},
        {"differentiable", QT_TRANSLATE_NOOP("ParamGroupsModel", "Autograd through the optimizer step")},
        {"alpha", QT_TRANSLATE_NOOP("ParamGroupsModel", "RMSprop: smoothing constant")},
        {"centered", QT_TRANSLATE_NOOP("ParamGroupsModel", "RMSprop: normalise by the estimated variance")},
        {"lr_decay", QT_TRANSLATE_NOOP("ParamGroupsModel", "Adagrad: learning-rate decay")},
    };
    for (const auto& [key, text] : known) {
        if (name == QLatin1String(key))
            return QCoreApplication::translate("ParamGroupsModel", text);
    }
    return ParamGroupsModel::tr("Hyperparameter %1 of the param group, as saved").arg(name);
}

} // namespace

ParamGroupsModel::ParamGroupsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void ParamGroupsModel::setOptimizer(const ckpt::OptimizerPart* optimizer)
{
    beginResetModel();
    m_names.clear();
    m_values.clear();
    m_sources.clear();
    m_parameterCounts.clear();
    if (optimizer) {
        for (const ckpt::ParamGroup& g : optimizer->groups) {
            for (const ckpt::StateField& f : g.hyperparameters) {
                if (!m_names.contains(fromUtf8(f.name)))
                    m_names.append(fromUtf8(f.name));
            }
        }
        for (const ckpt::ParamGroup& g : optimizer->groups) {
            QStringList values(m_names.size(), QString());
            QStringList sources(m_names.size(), QString());
            for (const ckpt::StateField& f : g.hyperparameters) {
                const qsizetype at = m_names.indexOf(fromUtf8(f.name));
                values[at] = fromUtf8(f.value);
                sources[at] = fromUtf8(f.from.file) + QStringLiteral(": ") + formatKey(f.from.key);
            }
            m_values.push_back(values);
            m_sources.push_back(sources);
            m_parameterCounts.push_back(static_cast<int>(g.params.size()));
        }
    }
    endResetModel();
}

int ParamGroupsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_values.size());
}

int ParamGroupsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : FirstHyperparameter + static_cast<int>(m_names.size());
}

QVariant ParamGroupsModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const auto row = static_cast<std::size_t>(index.row());
    const int hyper = index.column() - FirstHyperparameter;
    if (role == Qt::DisplayRole) {
        if (index.column() == Group)
            return index.row();
        if (index.column() == Parameters)
            return m_parameterCounts[row];
        return m_values[row].value(hyper);
    }
    if (role == Qt::ToolTipRole && hyper >= 0 && !m_sources[row].value(hyper).isEmpty())
        return tr("read from %1").arg(m_sources[row].value(hyper));
    return {};
}

QVariant ParamGroupsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return {};
    const bool tip = role == Qt::ToolTipRole;
    if (role != Qt::DisplayRole && !tip)
        return {};
    if (section == Group)
        return tip ? tr("Index of the param group in optimizer.param_groups") : tr("Group");
    if (section == Parameters)
        return tip ? tr("Number of parameters in the group") : tr("Params");
    const QString name = m_names.value(section - FirstHyperparameter);
    return tip ? explain(name) : name;
}
