// SPDX-License-Identifier: MIT
#include "ui/textformat.h"

#include "ckpt/pickle/tensor_info.h"
#include "ckpt/state/training_state.h"

#include <QFileInfo>
#include <QStringList>

QString humanBytes(uint64_t bytes)
{
    if (bytes < 1024)
        return QString::number(bytes) + QStringLiteral(" B");
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(bytes) / 1024;
    int unit = 0;
    while (v >= 1024 && unit < 4) {
        v /= 1024;
        ++unit;
    }
    const int decimals = v < 10 ? 2 : v < 100 ? 1 : 0;
    return QString::number(v, 'f', decimals) + QLatin1Char(' ') + QLatin1String(units[unit]);
}

QString formatShape(const std::vector<int64_t>& shape)
{
    QStringList dims;
    dims.reserve(static_cast<qsizetype>(shape.size()));
    for (const int64_t d : shape)
        dims.append(QString::number(d));
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString formatKey(const ckpt::KeyPath& path)
{
    return path.empty() ? QStringLiteral("(root)") : fromUtf8(ckpt::formatKeyPath(path));
}

QString tensorSummary(const ckpt::TensorInfo& tensor)
{
    QString s = fromUtf8(tensor.dtypeName) + QLatin1Char(' ') + formatShape(tensor.shape) + QLatin1Char(' ')
        + humanBytes(tensor.nbytes());
    if (tensor.layout != ckpt::TensorLayout::Strided)
        s += QLatin1Char(' ') + QLatin1String(ckpt::layoutName(tensor.layout));
    if (tensor.isParameter)
        s += QStringLiteral(" parameter");
    if (!tensor.device.empty() && tensor.device != "cpu")
        s += QStringLiteral(" on ") + fromUtf8(tensor.device);
    if (!tensor.problem.empty())
        s += QStringLiteral(" (") + fromUtf8(tensor.problem) + QLatin1Char(')');
    return s;
}

QString formatProvenance(const ckpt::Provenance& from)
{
    const QString file = QFileInfo(fromUtf8(from.file)).fileName();
    if (from.key.empty())
        return file;
    return file.isEmpty() ? formatKey(from.key) : file + QStringLiteral(": ") + formatKey(from.key);
}
