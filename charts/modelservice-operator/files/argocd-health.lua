-- Argo CD health check of modelops.dev/ModelService (docs/user/status.md,
-- "Health"): the chart renders it (argocd.healthCheck.enabled) as
-- resource.customizations.health.modelops.dev_ModelService. It reads the
-- conditions in kstatus' terms the controller writes, so that it agrees with
-- kstatus and Flux; test/health/run.sh runs it with gopher-lua over the
-- fixtures of every stage.
local hs = {}
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Pending deletion"
  return hs
end
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report a status"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. obj.metadata.generation
  return hs
end
local ready, degraded = nil, nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Stalled" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = (c.reason or "Stalled") .. ": " .. (c.message or "")
    return hs
  end
  if c.type == "Reconciling" and c.status == "True" then
    hs.status = "Progressing"
    hs.message = (c.reason or "Reconciling") .. ": " .. (c.message or "")
    return hs
  end
  if c.type == "Ready" then ready = c end
  if c.type == "Degraded" and c.status == "True" then degraded = c end
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or ""
  if degraded ~= nil then
    hs.message = hs.message .. "; Degraded: " .. (degraded.reason or "") .. ": " .. (degraded.message or "")
  end
  return hs
end
hs.status = "Progressing"
if ready ~= nil then
  hs.message = (ready.reason or "") .. ": " .. (ready.message or "")
else
  hs.message = "Waiting for the Ready condition"
end
return hs
