#!/usr/bin/env python3
"""Prints a prometheus.yml with the model pods' scrape job exactly as
docs/operator/monitoring.md gives it to users ("The model servers' metrics"),
and the DCGM exporter's ("GPU utilization: NVIDIA's DCGM exporter"), with
what a Prometheus outside the cluster adds to its Kubernetes service
discovery: the API server, its CA, a ServiceAccount token and the namespaces
to watch.

Usage: models-job.py DOC [API_SERVER CA_FILE TOKEN_FILE NAMESPACE [INTERVAL [DCGM_NAMESPACE]]]
  e.g. models-job.py docs/operator/monitoring.md https://10.0.0.1:443 ca.crt token e2e-real-loop 1s gpu-operator
With DOC alone: both jobs as written (test/monitoring/run.sh checks them with
promtool, and the first against the PodMonitor). Without DCGM_NAMESPACE, the
model pods' job only. INTERVAL replaces the docs'
scrape_interval (the end-to-end suite scrapes every second, so that a value
reaches queries in a second or two).
"""
import re
import sys

import yaml


def docs_job(doc_path, title="## The model servers' metrics"):
    doc = open(doc_path, encoding="utf-8").read()
    section = doc[doc.index(title):]
    block = re.search(r"```yaml\n(scrape_configs:.*?)```", section, re.S).group(1)
    return yaml.safe_load(block)["scrape_configs"][0]


DCGM_TITLE = "## GPU utilization: NVIDIA's DCGM exporter"


def in_cluster(job, role, api, ca, token, namespace):
    """The job's service discovery as a Prometheus outside the cluster has it."""
    if job.get("kubernetes_sd_configs") != [{"role": role}]:
        sys.exit("the scrape job %s's kubernetes_sd_configs is not [{role: %s}]: %r"
                 % (job.get("job_name"), role, job.get("kubernetes_sd_configs")))
    job["kubernetes_sd_configs"] = [{
        "role": role,
        "api_server": api,
        "tls_config": {"ca_file": ca},
        "authorization": {"credentials_file": token},
        "namespaces": {"names": [namespace]},
    }]


def main(argv):
    if len(argv) not in (2, 6, 7, 8):
        sys.exit(__doc__)
    job = docs_job(argv[1])
    dcgm = docs_job(argv[1], DCGM_TITLE)
    if len(argv) == 2:
        yaml.safe_dump({"scrape_configs": [job, dcgm]}, sys.stdout, sort_keys=False)
        return
    api, ca, token, namespace = argv[2:6]
    in_cluster(job, "pod", api, ca, token, namespace)
    jobs = [job]
    if len(argv) == 8:
        in_cluster(dcgm, "endpointslice", api, ca, token, argv[7])
        jobs.append(dcgm)
    if len(argv) >= 7:
        for j in jobs:
            j["scrape_interval"] = argv[6]
            j["scrape_timeout"] = argv[6]
    yaml.safe_dump({"global": {"evaluation_interval": job.get("scrape_interval", "15s")}, "scrape_configs": jobs},
                   sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main(sys.argv)
