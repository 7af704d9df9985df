#!/usr/bin/env python3
"""Prints a prometheus.yml with the model pods' scrape job exactly as
docs/operator/monitoring.md gives it to users ("The model servers' metrics"),
with what a Prometheus outside the cluster adds to its Kubernetes service
discovery: the API server, its CA, a ServiceAccount token and the namespaces
to watch.

Usage: models-job.py DOC [API_SERVER CA_FILE TOKEN_FILE NAMESPACE [INTERVAL]]
  e.g. models-job.py docs/operator/monitoring.md https://10.0.0.1:443 ca.crt token e2e-real-loop 1s
With DOC alone: the job as written (test/monitoring/run.sh checks it with
promtool and against the PodMonitor). INTERVAL replaces the docs'
scrape_interval (the end-to-end suite scrapes every second, so that a value
reaches queries in a second or two).
"""
import re
import sys

import yaml


def docs_job(doc_path):
    doc = open(doc_path, encoding="utf-8").read()
    section = doc[doc.index("## The model servers' metrics"):]
    block = re.search(r"```yaml\n(scrape_configs:.*?)```", section, re.S).group(1)
    return yaml.safe_load(block)["scrape_configs"][0]


def main(argv):
    if len(argv) not in (2, 6, 7):
        sys.exit(__doc__)
    job = docs_job(argv[1])
    if job.get("kubernetes_sd_configs") != [{"role": "pod"}]:
        sys.exit("%s: the scrape job's kubernetes_sd_configs is not [{role: pod}]: %r" % (argv[1], job.get("kubernetes_sd_configs")))
    if len(argv) == 2:
        yaml.safe_dump({"scrape_configs": [job]}, sys.stdout, sort_keys=False)
        return
    api, ca, token, namespace = argv[2:6]
    job["kubernetes_sd_configs"] = [{
        "role": "pod",
        "api_server": api,
        "tls_config": {"ca_file": ca},
        "authorization": {"credentials_file": token},
        "namespaces": {"names": [namespace]},
    }]
    if len(argv) == 7:
        job["scrape_interval"] = argv[6]
        job["scrape_timeout"] = argv[6]
    yaml.safe_dump({"global": {"evaluation_interval": job.get("scrape_interval", "15s")}, "scrape_configs": [job]},
                   sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main(sys.argv)
