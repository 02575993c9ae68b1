// drop_libvirt_clients PID: has libvirtd close every client connection that process PID has
// open (libvirt's admin API, as `virt-admin client-disconnect` does), as a daemon restart or a
// network failure would. Prints how many it closed. A separate program because libvirt-admin
// and libvirt cannot be loaded into one process.
#include <libvirt/libvirt-admin.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PID\n", argv[0]);
    return 2;
  }
  const int target = std::atoi(argv[1]);
  virAdmConnectPtr admin = virAdmConnectOpen(nullptr, 0);
  if (!admin) return 1;
  virAdmServerPtr server = virAdmConnectLookupServer(admin, "libvirtd", 0);
  if (!server) return 1;
  virAdmClientPtr* clients = nullptr;
  const int n = virAdmServerListClients(server, &clients, 0);
  int dropped = 0;
  for (int i = 0; i < n; ++i) {
    virTypedParameterPtr params = nullptr;
    int nparams = 0;
    int pid = 0;
    if (virAdmClientGetInfo(clients[i], &params, &nparams, 0) == 0) {
      virTypedParamsGetInt(params, nparams, VIR_CLIENT_INFO_UNIX_PROCESS_ID, &pid);
      virTypedParamsFree(params, nparams);
    }
    if (pid == target && virAdmClientClose(clients[i], 0) == 0) ++dropped;
    virAdmClientFree(clients[i]);
  }
  std::free(clients);
  virAdmServerFree(server);
  virAdmConnectClose(admin);
  std::printf("%d\n", dropped);
  return n < 0 ? 1 : 0;
}
