// The process's limit of open files: each connection holds a descriptor.
#pragma once

namespace ms::process {

// Raises the soft RLIMIT_NOFILE to the hard limit, as Go programs do at
// start (the soft limit is often 1024, which a thousand slow clients of the
// side endpoints or the webhook port would exhaust).
void RaiseOpenFileLimit();

}  // namespace ms::process
