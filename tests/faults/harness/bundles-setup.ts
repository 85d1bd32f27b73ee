import { buildBundles } from "@outcomes/testkit/production";

/** Global setup of the fault projects: this tree's bundles, built once, which every process they start runs. */
export default function setup(): void {
  buildBundles();
}
