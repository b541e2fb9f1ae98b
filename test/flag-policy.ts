// A ValidatingAdmissionPolicy (in-process, no webhook server) that denies a ConfigMap whose data
// has flag=off, bound to one namespace: test/preflight.test.ts and the differential suite's
// admission group both meet it.

/** The policy and its binding, both named `name`, denying flag=off in `namespace` only: the objects to apply. */
export function denyFlagOffPolicy(name: string, namespace: string): object[] {
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
      validations: [{ expression: "!has(object.data) || !('flag' in object.data) || object.data.flag != 'off'", message: 'the flag may not be off' }]
    }
  }
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } }
    }
  }
  return [policy, binding]
}
