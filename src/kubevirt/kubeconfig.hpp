// The parts of a kubeconfig file that reach a cluster: the current context's server, how to
// trust it, and who we are (a bearer token or a client certificate).
#pragma once

#include <stdexcept>
#include <string>

namespace bowline::kubevirt {

struct Connection {
  std::string context;  // the context used
  std::string server;   // https://host:6443, no trailing '/'
  // Trust: the CA's PEM text (certificate-authority-data) or its file; neither: the system's.
  std::string ca_pem;
  std::string ca_file;
  bool insecure_skip_tls_verify = false;
  // Identity: a bearer token, or a client certificate and key (PEM text or files).
  std::string token;
  std::string token_file;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string client_cert_file;
  std::string client_key_file;
};

class KubeconfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// $KUBECONFIG's first entry, else ~/.kube/config.
std::string default_kubeconfig_path();

// `text` is a kubeconfig; relative file names in it resolve against `base_dir`. An empty
// `context` means current-context. Pure: files named in it are not read here.
Connection parse_kubeconfig(const std::string& text, const std::string& base_dir,
                            const std::string& context = "");

// Reads the file, parses it and reads tokenFile when there is one. Throws KubeconfigError.
Connection load_kubeconfig(const std::string& path, const std::string& context = "");

}  // namespace bowline::kubevirt
