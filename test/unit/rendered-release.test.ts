// The manifest input read into the release's objects, hooks and crds/ files, from helm template's
// output, Helm's own --dry-run output as it is (Helm 4 and 3), or any YAML. The fixtures are the
// real binaries' output for test/chart/helm-output-demo (fixtures/helm-output/README.md).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { renderedJobs } from '../../src/settings/manifest.ts'
import { renderedRelease } from '../../src/settings/rendered-release.ts'

const output = (file: string): string => readFileSync(join(import.meta.dirname, 'fixtures', 'helm-output', file), 'utf8')
const names = (objects: KubeObject[]): string[] => objects.map((o) => `${o.kind}/${o.metadata?.name}`)
const volumes = (o: KubeObject | undefined): unknown => (o?.spec as { template?: { spec?: { volumes?: unknown } } } | undefined)?.template?.spec?.volumes

test('octal file modes are what Helm sends: 0755 is 493 in a Job, 0400 is 256 in a StatefulSet', () => {
  const { objects } = renderedRelease(`apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      volumes: [{name: s, configMap: {name: s, defaultMode: 0755}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      volumes: [{name: t, secret: {secretName: t, defaultMode: 0400, items: [{key: k, path: k, mode: 0644}]}}]
`)
  expect(objects.map(volumes)).toEqual([
    [{ name: 's', configMap: { name: 's', defaultMode: 493 } }],
    [{ name: 't', secret: { secretName: 't', defaultMode: 256, items: [{ key: 'k', path: 'k', mode: 420 }] } }]
  ])
})

test('yes, on and off are booleans, as for Helm', () => {
  const { objects } = renderedRelease(
    'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {enableServiceLinks: off, hostNetwork: yes, containers: [{name: c, tty: on, stdin: no}]}\n'
  )
  expect(objects[0].spec).toEqual({ enableServiceLinks: false, hostNetwork: true, containers: [{ name: 'c', tty: true, stdin: false }] })
})

test('a kind: List holds its items; documents without apiVersion, kind or name are not objects; YAML Helm cannot read throws', () => {
  const release = renderedRelease(`apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b, annotations: {helm.sh/hook: post-install}}}
  - {kind: ConfigMap, metadata: {name: no-version}}
---
apiVersion: v1
kind: Secret
metadata: {}
---
just text
`)
  expect([names(release.objects), names(release.hooks), release.renderer]).toEqual([['ConfigMap/a'], ['ConfigMap/b'], 'yaml'])
  expect(() => renderedRelease('a: 1\n---\nkind: Job\n  name: [unclosed')).toThrow(/^line 3: Nested mappings are not allowed/)
})

describe("Helm's dry-run output, as it is", () => {
  const template = renderedRelease(output('helm3-template.txt'))

  test.each([
    ['helm4-template-include-crds.txt', 'helm template'],
    ['helm3-template.txt', 'helm template'],
    ['helm4-install-dry-run.txt', 'helm install --dry-run'],
    ['helm4-install-dry-run-color.txt', 'helm install --dry-run'],
    ['helm3-install-dry-run.txt', 'helm install --dry-run'],
    ['helm4-upgrade-dry-run.txt', 'helm upgrade --dry-run'],
    ['helm3-upgrade-dry-run.txt', 'helm upgrade --dry-run'],
    ['helm4-upgrade-install-dry-run-server.txt', 'helm upgrade --install --dry-run'],
    ['helm3-upgrade-install-dry-run-server.txt', 'helm upgrade --install --dry-run']
  ])('%s: the objects and hooks of helm template, rendered by %s', (file, renderer) => {
    const release = renderedRelease(output(file))
    expect(release.renderer).toBe(renderer)
    expect(release.objects).toEqual(template.objects)
    expect(release.hooks).toEqual(template.hooks)
  })

  test('that is: the HOOKS: section is the hooks, MANIFEST: the objects, NOTES: is left alone; octal modes read as Helm reads them', () => {
    const release = renderedRelease(output('helm4-upgrade-dry-run.txt'))
    expect(names(release.objects)).toEqual([
      'CustomResourceDefinition/gadgets.demo.example.com',
      'StatefulSet/demo-db',
      'Job/demo-migrate',
      'ConfigMap/demo-scripts'
    ])
    expect(names(release.hooks)).toEqual(['Job/demo-pre-upgrade'])
    expect([release.objects, release.hooks].flat().map(volumes)).toEqual([
      undefined,
      [{ name: 'secret', secret: { secretName: 'demo-db', defaultMode: 256 } }],
      [{ name: 'scripts', configMap: { name: 'demo-scripts', defaultMode: 493 } }],
      undefined,
      [{ name: 'cfg', configMap: { name: 'demo-scripts', defaultMode: 416 } }]
    ])
  })

  test("a real run's --debug output has the same sections, under its final status", () => {
    const debug = output('helm4-upgrade-dry-run.txt')
      .replace('STATUS: pending-upgrade', 'STATUS: deployed')
      .replace('DESCRIPTION: Dry run complete', 'DESCRIPTION: Upgrade complete')
    expect(renderedRelease(debug)).toEqual({ ...renderedRelease(output('helm4-upgrade-dry-run.txt')), renderer: 'helm upgrade' })
  })

  test('a status without its sections is refused, saying which flag prints them; an error names the line in the whole output', () => {
    const status = output('helm4-upgrade-dry-run.txt').split('HOOKS:')[0]
    expect(() => renderedRelease(status)).toThrow(
      "the text is Helm's release status (NAME:, STATUS: pending-upgrade) without its HOOKS: and MANIFEST: sections: Helm prints them with --dry-run (or --debug)"
    )
    const lines = output('helm3-install-dry-run.txt').split('\n')
    const at = lines.indexOf('MANIFEST:') + 3
    lines.splice(at, 0, 'bad: [')
    expect(() => renderedRelease(lines.join('\n'))).toThrow(new RegExp(`^line ${at + 2}: `))
  })

  test("pre's Jobs come from the same reading: a dry run's hook Jobs count, as helm template's do", () => {
    const jobs = (file: string) => renderedJobs(output(file)).map((j) => [j.metadata?.name, j.spec?.template.spec?.volumes?.[0]])
    const fromTemplate = jobs('helm3-template.txt')
    expect(fromTemplate.map(([name]) => name)).toEqual(['demo-migrate', 'demo-pre-upgrade'])
    expect(fromTemplate[0][1]).toEqual({ name: 'scripts', configMap: { name: 'demo-scripts', defaultMode: 493 } })
    for (const file of ['helm4-upgrade-dry-run.txt', 'helm3-install-dry-run.txt']) expect(jobs(file).reverse()).toEqual(fromTemplate)
  })
})

describe("a chart's crds/ files", () => {
  test('helm template --include-crds: every document of a crds/ file is a crd; a CRD under templates/ is an object', () => {
    const release = renderedRelease(output('helm4-template-include-crds.txt'))
    expect(names(release.crds)).toEqual(['CustomResourceDefinition/widgets.demo.example.com', 'CustomResourceDefinition/sprockets.demo.example.com'])
    expect(names(release.objects)).toContain('CustomResourceDefinition/gadgets.demo.example.com')
    expect(release.crds[0].spec).toMatchObject({ versions: [{ served: true, storage: true }] })
  })

  test.each([
    ['c/crds/x.yaml', 'crds'],
    ['c/charts/sub/crds/x.yaml', 'crds'],
    ['c/charts/sub/charts/deeper/crds/x.yml', 'crds'],
    ['c/templates/crds/x.yaml', 'objects'],
    ['crds/templates/x.yaml', 'objects'],
    ['c/charts/crds/templates/x.yaml', 'objects']
  ])('# Source: %s → %s', (source, where) => {
    const release = renderedRelease(`---\n# Source: ${source}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n`)
    expect({ crds: names(release.crds), objects: names(release.objects) }).toEqual({ crds: [], objects: [], [where]: ['ConfigMap/x'] })
  })
})
