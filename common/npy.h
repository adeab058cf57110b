// NumPy .npy files (format versions 1.0, 2.0 and 3.0) for tensors going in and out of ir-migrate.
// Reading accepts little- and big-endian data and Fortran order (converted to C order); writing
// produces version 1.0 (2.0 when the header needs it), little-endian, C order, the header padded
// to a multiple of 64 bytes as NumPy does. bfloat16, which NumPy lacks, is written with descr
// '<V2' (what ml_dtypes-backed arrays save as) and '<V2' (also '|V2', '=V2', '>V2') is read back
// as bfloat16.
#pragma once

#include <string>
#include <string_view>

#include "common/host_tensor.h"
#include "common/status.h"

namespace irm {

// `file` only names the input in diagnostics.
StatusOr<HostTensor> ParseNpy(std::string_view bytes, const std::string& file);
StatusOr<std::string> SerializeNpy(const HostTensor& tensor);

StatusOr<HostTensor> LoadNpy(const std::string& path);              // "-" reads stdin
Status SaveNpy(const HostTensor& tensor, const std::string& path);  // atomic

}  // namespace irm
